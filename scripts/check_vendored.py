"""Check that each third-party file the web UI serves (src/statewright/api/ui/static/vendor/)
is byte-identical to the file in the published package: downloads each package's tarball from
its registry, checks the tarball's integrity (the registry's sha512) and compares every vendored
file with the tarball's, byte for byte. Needs the network; exits 1 naming each difference.

    .venv/bin/python scripts/check_vendored.py
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import sys
import tarfile
import urllib.request
from pathlib import Path

VENDOR = Path(__file__).resolve().parent.parent / "src/statewright/api/ui/static/vendor"


def check_package(pkg: dict[str, object]) -> list[str]:
    """The differences between one package's vendored files and its published tarball."""
    with urllib.request.urlopen(str(pkg["tarball"]), timeout=60) as res:
        blob = res.read()
    algo, _, expected = str(pkg["integrity"]).partition("-")
    if base64.b64encode(hashlib.new(algo, blob).digest()).decode() != expected:
        return [f"{pkg['name']}@{pkg['version']}: the tarball does not match its integrity"]
    problems = []
    with tarfile.open(fileobj=io.BytesIO(blob)) as tar:
        files = pkg["files"]
        assert isinstance(files, dict)
        for name, spec in files.items():
            member = tar.extractfile(spec["from"])
            published = member.read() if member else b""
            ours = (VENDOR / name).read_bytes()
            if ours != published:
                problems.append(f"{name} differs from {pkg['name']}@{pkg['version']}:"
                                f"{spec['from']}")
            elif hashlib.sha256(ours).hexdigest() != spec["sha256"]:
                problems.append(f"{name}: vendored.json has a wrong sha256")
    return problems


def main() -> int:
    manifest = json.loads((VENDOR / "vendored.json").read_text())
    problems = [p for pkg in manifest["packages"] for p in check_package(pkg)]
    for p in problems:
        print(p)
    if not problems:
        print(f"{sum(len(p['files']) for p in manifest['packages'])} vendored files are "
              "byte-identical to their published packages")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
