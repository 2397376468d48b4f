"""In Chromium: a failed gradient check shows both Jacobians side by side, differences marked."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from explorer.views.permalink import encode_code
from tests.conftest import ARTIFACTS
from tests.test_custom import STRAIGHT_THROUGH, THREE, WRONG_MUL, WRONG_RELU

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("width", [1400, 1920])
def test_a_wrong_backward_shows_both_jacobians_and_marks_where_they_differ(
        browser: Any, app_url: str, width: int) -> None:
    context = browser.new_context(viewport={"width": width, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.goto(f"{app_url}/Custom_Function?code={encode_code(WRONG_RELU)}")
    page.get_by_role("button", name="Run").click()
    expect(page.get_by_text("gradcheck failed: MyReLU.backward does not match")).to_be_visible()
    expect(page.get_by_text("gradcheck says: Jacobian mismatch for output 0")).to_be_visible()
    expect(page.get_by_text("with atol = 0.0001 and rtol = 0.001")).to_be_visible()
    expect(page.get_by_text("with eps = 1e-06", exact=False)).to_be_visible()
    expect(page.get_by_text("Farthest apart: row 0, column")).to_be_visible()
    tables = page.locator("table").filter(has=page.locator("td"))
    expect(tables).to_have_count(2)
    analytical, numerical = tables.nth(0), tables.nth(1)
    for table in (analytical, numerical):
        expect(table).to_be_visible()
        expect(table.locator("tbody tr")).to_have_count(8)
        expect(table.locator("tbody tr").first.locator("td")).to_have_count(9)
    marked = [table.locator("td span strong").count() for table in (analytical, numerical)]
    assert marked[0] == marked[1] > 0
    assert marked[0] % 8 == 0  # a wrong column: every output element's row differs there
    assert analytical.locator("td span strong").first.inner_text() == "1"
    assert numerical.locator("td span strong").first.inner_text() == "0"
    expect(page.get_by_text(f"Input 0: {marked[0]} of 64 entries differ")).to_be_visible()
    page.screenshot(path=ARTIFACTS / f"custom-jacobians-{width}.png", full_page=True)
    assert_laid_out(page, [analytical, numerical], side_by_side=width >= 1920)
    context.close()


def assert_laid_out(page: Any, tables: list[Any], side_by_side: bool) -> None:
    """Each table whole inside the check's column, each pair (analytical, numerical) side by
    side where asked, else anywhere but on top of each other."""
    column = page.get_by_role("tabpanel").first.bounding_box()
    boxes = [table.bounding_box() for table in tables]
    for box in boxes:
        assert column["x"] <= box["x"] and box["x"] + box["width"] <= column["x"] + column[
            "width"]
    for left, right in zip(boxes[::2], boxes[1::2], strict=True):
        beside = abs(left["y"] - right["y"]) < 5 and left["x"] + left["width"] <= right["x"]
        assert beside or (not side_by_side and left["y"] + left["height"] <= right["y"])


def test_wide_numbers_wrap_the_numerical_jacobian_below_and_never_overlap(page: Any,
                                                                         app_url: str) -> None:
    page.goto(f"{app_url}/Custom_Function?code={encode_code(WRONG_MUL)}")
    page.get_by_role("button", name="Run").click()
    expect(page.get_by_text("Input 1: 8 of 64 entries differ")).to_be_visible()
    expect(page.get_by_text("Input 0: 0 of 64 entries differ")).to_be_visible()
    tables = page.locator("table").filter(has=page.locator("td"))
    expect(tables).to_have_count(4)
    page.screenshot(path=ARTIFACTS / "custom-jacobians-wide.png", full_page=True)
    assert_laid_out(page, [tables.nth(i) for i in range(4)], side_by_side=False)


def test_a_three_element_x_draws_3_by_3_jacobians_and_a_non_relu_no_relu_comparison(
        page: Any, app_url: str) -> None:
    page.goto(f"{app_url}/Custom_Function?code={encode_code(THREE)}")
    page.get_by_role("button", name="Run").click()
    expect(page.get_by_text("Checked at your program's own values: the inputs MyReLU.apply "
                            "gets on line")).to_be_visible()
    expect(page.get_by_text("Its gradient equals autograd's torch.relu gradient.")
           ).to_be_visible()
    page.get_by_text("Jacobians of MyReLU").click()
    _jacobian_tables(page, rows=3, cells=4)
    page.screenshot(path=ARTIFACTS / "custom-three.png", full_page=True)

    page.goto(f"{app_url}/Custom_Function?code={encode_code(STRAIGHT_THROUGH)}")
    page.get_by_role("button", name="Run").click()
    expect(page.get_by_text("gradcheck passed: Square.backward")).to_be_visible()
    expect(page.get_by_text("gradcheck failed: Sign.backward")).to_be_visible()
    expect(page.get_by_text("torch.relu gradient")).to_have_count(0)
    page.screenshot(path=ARTIFACTS / "custom-not-relu.png", full_page=True)


def test_the_seeds_relu_shows_the_first_rows_and_columns_of_its_jacobians_in_the_column(
        page: Any, app_url: str) -> None:
    page.goto(f"{app_url}/Custom_Function")
    page.get_by_role("button", name="Run").click()
    expect(page.get_by_text("gradcheck passed: MyReLU.backward")).to_be_visible()
    expect(page.get_by_text("shaped (64, 100).")).to_be_visible()
    expect(page.get_by_text("Its gradient equals autograd's torch.relu gradient.")
           ).to_be_visible()
    page.get_by_text("Jacobians of MyReLU").click()
    expect(page.get_by_text("The first 16 of this input's 6400 elements.")).to_be_visible()
    tables = _jacobian_tables(page, rows=48, cells=17)
    page.screenshot(path=ARTIFACTS / "custom-seed.png", full_page=True)
    assert_laid_out(page, [tables.nth(0), tables.nth(1)], side_by_side=False)


def _jacobian_tables(page: Any, rows: int, cells: int) -> Any:
    """The two Jacobian tables (yours, the numerical one), each `rows` rows of `cells` cells
    (an index and the columns shown)."""
    tables = page.locator("table").filter(has=page.locator("td"))
    expect(tables).to_have_count(2)
    for k in range(2):
        expect(tables.nth(k).locator("tbody tr")).to_have_count(rows)
        expect(tables.nth(k).locator("tbody tr").first.locator("td")).to_have_count(cells)
    return tables
