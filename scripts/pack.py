#!/usr/bin/env python3
"""Packs the staged release folder (bin/, lib/, licences) that scripts/dist.sh
built into the one-line install forms, with the very same binary and
libraries as the tarball:

  micro_rag_mcp-PYVER-py3-none-manylinux_X_Y_x86_64.whl  (pip, uvx)
  micro-rag-mcp-linux-x64-gnu-NPMVER.tgz                  (npm platform package)
  micro-rag-mcp-NPMVER.tgz                                (npm launcher)

Usage: pack.py STAGE OUTDIR VERSION. VERSION is scripts/version.sh's;
SOURCE_DATE_EPOCH, when set, dates every file in the wheel.
Only the standard library and npm are used, so no build backend is fetched.
"""
import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile

NAME = "micro-rag-mcp"
MODULE = "micro_rag_mcp"
PLATFORM_NPM = NAME + "-linux-x64-gnu"
SUMMARY = "Local semantic search over a folder of documents, as an MCP server on stdio"
HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGING = os.path.join(HERE, "..", "packaging")


def versions(v):
    """The release version as PEP 440 and as npm's semver. A tagged release
    X.Y.Z is the same in both; anything after it (dev builds, commits past
    a tag, -dirty) becomes a local version (+...) and a prerelease (-...)."""
    m = re.fullmatch(r"(\d+\.\d+\.\d+)(.*)", v)
    if not m:
        raise SystemExit(f"pack: version {v!r} does not start with X.Y.Z")
    base, rest = m.groups()
    parts = [p for p in re.split(r"[^0-9A-Za-z]+", rest) if p]
    if not parts:
        return base, base
    # semver forbids numeric identifiers with a leading zero.
    npm = [("g" + p) if p.isdigit() and p.startswith("0") and p != "0" else p for p in parts]
    return base + "+" + ".".join(parts).lower(), base + "-" + ".".join(npm)


def glibc_floor(paths):
    """The newest GLIBC_x.y version any of the ELF files needs, from their
    version-needs sections: what the dynamic loader checks at start-up."""
    best = (2, 17)
    for p in paths:
        out = subprocess.run(["readelf", "-V", "--wide", p], check=True, capture_output=True, text=True).stdout
        for major, minor in re.findall(r"Name: GLIBC_(\d+)\.(\d+)", out):
            best = max(best, (int(major), int(minor)))
    return best


def elf_files(root):
    found = []
    for d, _, files in os.walk(root):
        for f in files:
            p = os.path.join(d, f)
            with open(p, "rb") as fh:
                if fh.read(4) == b"\x7fELF":
                    found.append(p)
    return sorted(found)


def walk(root):
    """(relative path, absolute path) of every file under root, sorted."""
    out = []
    for d, _, files in os.walk(root):
        for f in files:
            p = os.path.join(d, f)
            out.append((os.path.relpath(p, root), p))
    return sorted(out)


def wheel(stage, outdir, pyver, floor):
    tag = f"py3-none-manylinux_{floor[0]}_{floor[1]}_x86_64"
    distinfo = f"{MODULE}-{pyver}.dist-info"
    path = os.path.join(outdir, f"{MODULE}-{pyver}-{tag}.whl")
    with open(os.path.join(stage, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    entries = []  # (name in the zip, bytes, executable)

    def add_file(name, src, executable=False):
        with open(src, "rb") as f:
            entries.append((name, f.read(), executable))

    for rel in ("__init__.py", "__main__.py"):
        add_file(f"{MODULE}/{rel}", os.path.join(PACKAGING, "python", rel))
    add_file(f"{MODULE}/bin/{NAME}", os.path.join(stage, "bin", NAME), executable=True)
    for rel, src in walk(os.path.join(stage, "lib")):
        add_file(f"{MODULE}/lib/{rel}", src)
    for rel in ("LICENSE", "THIRD_PARTY_NOTICES.md"):
        add_file(f"{distinfo}/licenses/{rel}", os.path.join(stage, rel))
    for rel, src in walk(os.path.join(stage, "licenses")):
        add_file(f"{distinfo}/licenses/licenses/{rel}", src)
    metadata = "\n".join([
        "Metadata-Version: 2.1",
        f"Name: {NAME}",
        f"Version: {pyver}",
        f"Summary: {SUMMARY}",
        "License: MIT; bundled third-party components under their own licences (see licenses/)",
        "Requires-Python: >=3.8",
        "Classifier: Operating System :: POSIX :: Linux",
        "Classifier: License :: OSI Approved :: MIT License",
        "Description-Content-Type: text/markdown",
        "", readme])
    entries.append((f"{distinfo}/METADATA", metadata.encode(), False))
    entries.append((f"{distinfo}/WHEEL", "\n".join([
        "Wheel-Version: 1.0", "Generator: micro-rag-mcp scripts/pack.py",
        # Not pure: the package carries a native binary for one platform.
        "Root-Is-Purelib: false", f"Tag: {tag}", ""]).encode(), False))
    entries.append((f"{distinfo}/entry_points.txt",
                    f"[console_scripts]\n{NAME} = {MODULE}:main\n".encode(), False))
    record = []
    for name, data, _ in entries:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(data)}")
    record.append(f"{distinfo}/RECORD,,")
    entries.append((f"{distinfo}/RECORD", ("\n".join(record) + "\n").encode(), False))

    epoch = int(os.environ.get("SOURCE_DATE_EPOCH", "315532800"))
    date = max(epoch, 315532800)  # zip dates start in 1980
    stamp = time.gmtime(date)[:6]
    tmp = path + ".tmp"
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        for name, data, executable in entries:
            info = zipfile.ZipInfo(name, stamp)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = ((0o100755 if executable else 0o100644) << 16)
            z.writestr(info, data)
    os.replace(tmp, path)
    return path


def npm_pack(folder, outdir):
    out = subprocess.run(["npm", "pack", "--silent", "--pack-destination", os.path.abspath(outdir), folder],
                         check=True, capture_output=True, text=True).stdout.strip().splitlines()
    return os.path.join(outdir, out[-1])


def write_json(path, obj):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=2)
        f.write("\n")


def npm(stage, outdir, npmver, floor):
    work = tempfile.mkdtemp()
    try:
        plat = os.path.join(work, "platform")
        os.makedirs(plat)
        for d in ("bin", "lib", "licenses"):
            shutil.copytree(os.path.join(stage, d), os.path.join(plat, d))  # real files, modes kept
        for f in ("LICENSE", "THIRD_PARTY_NOTICES.md"):
            shutil.copy2(os.path.join(stage, f), plat)
        with open(os.path.join(plat, "README.md"), "w", encoding="utf-8") as f:
            f.write(f"# {PLATFORM_NPM}\n\nThe {NAME} binary and its libraries for Linux x86_64 "
                    f"(glibc {floor[0]}.{floor[1]} or newer). Install `{NAME}`, which runs it; "
                    "this package is its optional dependency.\n")
        write_json(os.path.join(plat, "package.json"), {
            "name": PLATFORM_NPM,
            "version": npmver,
            "description": f"{NAME} binary for Linux x86_64 (glibc {floor[0]}.{floor[1]}+)",
            "license": "MIT",
            "os": ["linux"],
            "cpu": ["x64"],
            "libc": ["glibc"],
            "files": ["bin/", "lib/", "licenses/", "THIRD_PARTY_NOTICES.md"],
            "preferUnplugged": True,
        })
        main = os.path.join(work, "main")
        os.makedirs(os.path.join(main, "bin"))
        shutil.copy(os.path.join(PACKAGING, "npm", "micro-rag-mcp.js"), os.path.join(main, "bin", NAME + ".js"))
        os.chmod(os.path.join(main, "bin", NAME + ".js"), 0o755)
        for f in ("README.md", "LICENSE"):
            shutil.copy2(os.path.join(stage, f), main)
        write_json(os.path.join(main, "package.json"), {
            "name": NAME,
            "version": npmver,
            "description": SUMMARY,
            "license": "MIT",
            "bin": {NAME: f"bin/{NAME}.js"},
            # Exact pin: the launcher and the binary come from one build.
            "optionalDependencies": {PLATFORM_NPM: npmver},
            "engines": {"node": ">=16"},
            "files": ["bin/"],
            # Read by the launcher for its message on an unsupported system.
            "glibcFloor": f"{floor[0]}.{floor[1]}",
        })
        return npm_pack(plat, outdir), npm_pack(main, outdir)
    finally:
        shutil.rmtree(work)


def main():
    if len(sys.argv) != 4:
        raise SystemExit("usage: pack.py STAGE OUTDIR VERSION")
    stage, outdir, version = sys.argv[1:]
    pyver, npmver = versions(version)
    floor = glibc_floor(elf_files(os.path.join(stage, "bin")) + elf_files(os.path.join(stage, "lib")))
    for p in [wheel(stage, outdir, pyver, floor), *npm(stage, outdir, npmver, floor)]:
        print(f"pack: {p} ({os.path.getsize(p) / 1e6:.1f} MB)", file=sys.stderr)


if __name__ == "__main__":
    main()
