"""`autograd-explorer`: start the app with Streamlit, from a checkout or an installed copy.

The app's files (streamlit_app.py, pages/, .streamlit/config.toml) sit beside the `explorer`
package in a checkout or an editable install, and in share/autograd-explorer under the
installation's data directory after a regular `pip install`. Streamlit runs in that directory,
so its config.toml (no error details for visitors, no upload, ...) applies.
"""

from __future__ import annotations

import argparse
import os
import sys
import sysconfig
from pathlib import Path

from explorer.serve.hosting import VARIABLE

APP = "streamlit_app.py"
NEEDED = (APP, "pages", ".streamlit/config.toml")
SHARE = Path("share", "autograd-explorer")


def places() -> list[Path]:
    """Where the app's files may be, in order: the checkout, the install, the user install."""
    checkout = Path(__file__).resolve().parents[2]
    data = [Path(sysconfig.get_path("data", scheme)) / SHARE
            for scheme in (sysconfig.get_default_scheme(), f"{os.name}_user")
            if scheme in sysconfig.get_scheme_names()]
    return [checkout, *data]


def app_dir(candidates: list[Path]) -> Path:
    """The first of `candidates` that holds every app file."""
    for place in candidates:
        if all((place / name).exists() for name in NEEDED):
            return place
    raise FileNotFoundError(
        "the app's files (" + ", ".join(NEEDED) + ") are in none of: "
        + ", ".join(str(p) for p in candidates)
        + ". Install the app with `pip install .` from its source, or run it from a checkout.")


def port(value: str) -> int:
    """A TCP port number (argparse says "invalid port value" for one that is no number)."""
    number = int(value)
    if not 1 <= number <= 65535:
        raise argparse.ArgumentTypeError(f"{value} is not a port (1-65535)")
    return number


def parser() -> argparse.ArgumentParser:
    """The command line: port, address, hosted mode."""
    commands = argparse.ArgumentParser(
        prog="autograd-explorer", description="Start Autograd Explorer, a Streamlit app.")
    commands.add_argument("--port", type=port, default=8501,
                          help="port to serve on (default: 8501)")
    commands.add_argument("--address", help="address to bind, e.g. 0.0.0.0 for every "
                          "interface or 127.0.0.1 for this machine only (default: Streamlit's)")
    commands.add_argument("--hosted", action="store_true",
                          help=f"public-demo limits, as {VARIABLE}=1 does")
    return commands


def main(argv: list[str] | None = None) -> None:
    """Replace this process with `python -m streamlit run streamlit_app.py` in the app's
    directory: Streamlit gets the signals (Ctrl-C, a container's stop) itself."""
    commands = parser()
    args = commands.parse_args(argv)
    try:
        where = app_dir(places())
    except FileNotFoundError as error:
        commands.exit(2, f"autograd-explorer: {error}\n")
    from explorer.safety import box  # the walls' bindings, once the app is to start

    if box.stopped_by_apparmor():  # said where the machine's owner can act on it
        print(f"autograd-explorer: {box.missing()}\n\n{box.apparmor_advice()}\n",
              file=sys.stderr, flush=True)
    command = [sys.executable, "-m", "streamlit", "run", APP, "--server.port", str(args.port)]
    if args.address:
        command += ["--server.address", args.address]
    if args.hosted:
        os.environ[VARIABLE] = "1"
    os.chdir(where)
    os.execv(sys.executable, command)
