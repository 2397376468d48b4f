"""Ubuntu (23.10 on) has AppArmor keep users other than root from making user namespaces
(`kernel.apparmor_restrict_unprivileged_userns = 1`), and bubblewrap then fails as it builds
the box. That is told apart from other failures, and the page, the command line and the log say
what to run, in English and Chinese. The setting's reading is faked with a file of our own.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from explorer.safety import box

UID_MAP = b"bwrap: setting up uid map: Permission denied\n"  # as Ubuntu 24.04's bubblewrap says
LOOPBACK = b"bwrap: loopback: Failed RTM_NEWADDR: Operation not permitted\n"
TRACEBACK = (b"Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\n"
             b"RuntimeError: Unable to find libseccomp\n")


def setting(folder: Path, value: str) -> str:
    """A file that reads as `/proc/sys/kernel/apparmor_restrict_unprivileged_userns` would."""
    path = folder / "apparmor_restrict_unprivileged_userns"
    path.write_text(value)
    return str(path)


def test_the_setting_is_read_as_the_kernel_writes_it(tmp_path: Path) -> None:
    assert box.userns_restricted(setting(tmp_path, "1\n"))
    assert not box.userns_restricted(setting(tmp_path, "0\n"))
    assert not box.userns_restricted(str(tmp_path / "absent"))  # no AppArmor, or older kernel


@pytest.mark.parametrize("said", [UID_MAP, LOOPBACK], ids=["uid map", "loopback"])
def test_bubblewrap_failing_under_the_restriction_is_put_down_to_apparmor(
        tmp_path: Path, said: bytes) -> None:
    reason = box.failure_reason(said, root=False, setting=setting(tmp_path, "1\n"))
    assert reason == f"bubblewrap could not build the box: {box.APPARMOR}"


def test_other_failures_are_told_by_their_own_words(tmp_path: Path) -> None:
    restricted, free = setting(tmp_path, "1\n"), str(tmp_path / "absent")
    assert box.failure_reason(UID_MAP, root=False, setting=free).endswith(
        "setting up uid map: Permission denied")
    assert box.failure_reason(UID_MAP, root=True, setting=restricted).endswith(  # root makes none
        "setting up uid map: Permission denied")
    inside = box.failure_reason(TRACEBACK, root=False, setting=restricted)  # the box was built
    assert inside.endswith("RuntimeError: Unable to find libseccomp") and "AppArmor" not in inside


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_advice_says_what_to_run_and_why(lang: str) -> None:
    advice = box.apparmor_advice(lang)
    commands = box.apparmor_commands()
    assert commands["profile"] in advice and commands["sysctl"] in advice
    assert "kernel.apparmor_restrict_unprivileged_userns = 1" in advice  # why
    assert ("Why" if lang == "en" else "原因") in advice


@pytest.mark.skipif(shutil.which("sh") is None, reason="needs a shell")
def test_the_profile_command_writes_a_profile_for_this_bubblewrap(tmp_path: Path) -> None:
    """The command's `printf`, run by a shell, gives AppArmor's profile for the bwrap in use,
    allowed user namespaces (`sudo tee` and `apparmor_parser` are Ubuntu's, not run here)."""
    printf = box.apparmor_commands()["profile"].split(" | ")[0]
    written = subprocess.run(["sh", "-c", printf], capture_output=True, text=True, check=True,
                             cwd=tmp_path).stdout
    bwrap = os.path.realpath(shutil.which("bwrap") or "/usr/bin/bwrap")
    assert written == ("abi <abi/4.0>,\ninclude <tunables/global>\n"
                       f"profile bwrap {bwrap} flags=(unconfined) {{\n  userns,\n}}\n")
