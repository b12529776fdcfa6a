"""Writes the HTML template `dvc plots show` fills (.dvc/config: plots.html_template), with Vega inside it.

DVC's own page loads vega, vega-lite and vega-embed from a CDN, so it is blank offline. This template carries the
three libraries' bundles inline instead, at the versions DVC's renderer was written for, fetched once by `make
setup` from the npm registry with `npm pack` and checked against the integrity pinned below; `dvc plots show`
then needs no network. Without npm it says in one line what to install.

    python scripts/dvc_plots_template.py OUT.html
"""

from __future__ import annotations

import base64
import hashlib
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

# package: (version, npm's sha512 integrity of the tarball, the bundle inside it); dvc-render's vega.py names these
# versions in its CDN links.
PACKAGES = {
    "vega": ("5.20.2", "qmH7aD9GGPpssVdxL1xgcdxTbQzyRUeRR16Os385ymvQhiwCYQNA6+eXUPAZDTVLfk0RXu6Jzj6kUE5jQ80EVw==",
             "package/build/vega.min.js"),
    "vega-lite": ("5.2.0", "Yxcg8MvYfxHcG6BbkaKT0oVCIMIcE19UvqIsEwBmyd/7h2nzW7oRnID81T8UrY7hpDrIr6wa2JADOT2dhGNErw==",
                  "package/build/vega-lite.min.js"),
    "vega-embed": ("6.18.2", "wcDyQPE4J5aiCDc3/suH5RQDvrKkjuLkhzUcbOLwEkNF8/+pp17tS0JghzEvAPNRg+5aG1/N2ydixq8Lk3dOlg==",
                   "package/build/vega-embed.min.js"),
}

# DVC's page (dvc_render.html.PAGE_HTML) without its {scripts}, which are the CDN links. Charts sit in a grid
# that wraps, so the runs' curves stay side by side on a wide screen and stack on a narrow one.
PAGE = """<!DOCTYPE html>
<html>
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>DVC Plot</title>
{libraries}
<script>
// DVC calls vegaEmbed(element, spec) in each chart's div: draw as SVG (sharp at any zoom, a path per line) and keep
// the views, so that a test can see every curve.
window.vegaViews = [];
const embedChart = window.vegaEmbed;
window.vegaEmbed = (el, spec, opts) => embedChart(el, spec, Object.assign({{renderer: "svg"}}, opts))
  .then(result => {{ window.vegaViews.push(result.view); return result; }});
</script>
<style>
body {{ font-family: sans-serif; margin: 1rem; }}
body > div {{ display: inline-block; vertical-align: top; max-width: 100%; overflow-x: auto; }}
table {{ border-spacing: 15px; }}
</style>
</head>
<body>
{{plot_divs}}
</body>
</html>
"""


class SetupError(Exception):
    pass


def fetch_bundle(name: str, workdir: Path) -> str:
    version, integrity, member = PACKAGES[name]
    npm = shutil.which("npm")
    if npm is None:
        raise SetupError("npm is missing: install Node.js's npm (Debian: sudo apt-get install -y npm; macOS: brew "
                         "install node) for `dvc plots show` to work offline")
    proc = subprocess.run([npm, "pack", f"{name}@{version}", "--pack-destination", str(workdir), "--silent"],
                          capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise SetupError(f"`npm pack {name}@{version}` failed: {proc.stderr.strip().splitlines()[-1:]}")
    tarball = workdir / proc.stdout.strip().splitlines()[-1]
    digest = base64.b64encode(hashlib.sha512(tarball.read_bytes()).digest()).decode()
    if digest != integrity:
        raise SetupError(f"{tarball.name} does not match its pinned sha512 integrity (got sha512-{digest})")
    with tarfile.open(tarball) as archive:
        handle = archive.extractfile(member)
        if handle is None:
            raise SetupError(f"{tarball.name} has no {member}")
        return handle.read().decode("utf-8")


def template(bundles: dict[str, str]) -> str:
    # "</script" cannot occur inside a script element; the bundles are minified JS, checked rather than assumed.
    for name, code in bundles.items():
        if "</script" in code.lower():
            raise SetupError(f"{name}'s bundle contains '</script' and cannot be inlined")
    libraries = "\n".join(f"<script>/* {name}@{PACKAGES[name][0]} */\n{code}\n</script>"
                          for name, code in bundles.items())
    return PAGE.format(libraries=libraries)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    out = Path(args[0])
    print(f"setup: fetching {', '.join(f'{n}@{v[0]}' for n, v in PACKAGES.items())} from npm for `dvc plots show`",
          flush=True)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            bundles = {name: fetch_bundle(name, Path(tmp)) for name in PACKAGES}
    except (SetupError, OSError, subprocess.TimeoutExpired) as exc:
        print(f"setup: {exc}", file=sys.stderr)
        return 1
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp_out = out.with_suffix(".tmp")
    tmp_out.write_text(template(bundles), encoding="utf-8")
    tmp_out.replace(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
