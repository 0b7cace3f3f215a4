#!/usr/bin/env python3
"""Packs the staged release folder (bin/, lib/, licences) that scripts/dist.sh
built into the one-line install forms, with the very same binary and
libraries as the tarball:

  micro_rag_mcp_go-VERSION-py3-none-manylinux_X_Y_x86_64.whl  (pip, uvx)
  micro-rag-mcp-go-linux-x64-gnu-VERSION.tgz                  (npm platform package)
  micro-rag-mcp-go-VERSION.tgz                                (npm launcher)

The distributions are named micro-rag-mcp-go: the name micro-rag-mcp on
the Python package index belongs to another project. Both install the
command micro-rag-mcp, and micro-rag-mcp-go beside it so that a runner
given only the distribution's name (uvx NAME, npx NAME) finds a command.

Usage: pack.py STAGE OUTDIR VERSION. VERSION is scripts/version.sh's, the
same string in all three file names and metadata;
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

NAME = "micro-rag-mcp-go"  # the distribution, on both registries
COMMAND = "micro-rag-mcp"  # the program; NAME is installed as a second command
MODULE = "micro_rag_mcp_go"
PLATFORM_NPM = NAME + "-linux-x64-gnu"
SUMMARY = "Local semantic search over a folder of documents, as an MCP server on stdio"
HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGING = os.path.join(HERE, "..", "packaging")


def check_version(v):
    """v must read the same to PEP 440 (in its normal form) and to semver:
    X.Y.Z, optionally +WORD.WORD... of lower-case letters and digits, no
    all-digit word with a leading zero (PEP 440 would drop the zero)."""
    m = re.fullmatch(r"\d+\.\d+\.\d+(?:\+([0-9a-z]+(?:\.[0-9a-z]+)*))?", v)
    bad = m and any(w.isdigit() and len(w) > 1 and w[0] == "0" for w in (m.group(1) or "").split("."))
    if not m or bad or any(len(p) > 1 and p[0] == "0" for p in v.split("+")[0].split(".")):
        raise SystemExit(f"pack: version {v!r} is not X.Y.Z[+word.word...], the one spelling PEP 440 and semver share")
    return v


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


def wheel(stage, outdir, version, floor):
    tag = f"py3-none-manylinux_{floor[0]}_{floor[1]}_x86_64"
    distinfo = f"{MODULE}-{version}.dist-info"
    path = os.path.join(outdir, f"{MODULE}-{version}-{tag}.whl")
    with open(os.path.join(stage, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    entries = []  # (name in the zip, bytes, executable)

    def add_file(name, src, executable=False):
        with open(src, "rb") as f:
            entries.append((name, f.read(), executable))

    for rel in ("__init__.py", "__main__.py"):
        add_file(f"{MODULE}/{rel}", os.path.join(PACKAGING, "python", rel))
    add_file(f"{MODULE}/bin/{COMMAND}", os.path.join(stage, "bin", COMMAND), executable=True)
    for rel, src in walk(os.path.join(stage, "lib")):
        add_file(f"{MODULE}/lib/{rel}", src)
    for rel in ("LICENSE", "THIRD_PARTY_NOTICES.md"):
        add_file(f"{distinfo}/licenses/{rel}", os.path.join(stage, rel))
    for rel, src in walk(os.path.join(stage, "licenses")):
        add_file(f"{distinfo}/licenses/licenses/{rel}", src)
    metadata = "\n".join([
        "Metadata-Version: 2.1",
        f"Name: {NAME}",
        f"Version: {version}",
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
                    f"[console_scripts]\n{COMMAND} = {MODULE}:main\n{NAME} = {MODULE}:main\n".encode(), False))
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


def npm(stage, outdir, version, floor):
    work = tempfile.mkdtemp()
    try:
        plat = os.path.join(work, "platform")
        os.makedirs(plat)
        for d in ("bin", "lib", "licenses"):
            shutil.copytree(os.path.join(stage, d), os.path.join(plat, d))  # real files, modes kept
        for f in ("LICENSE", "THIRD_PARTY_NOTICES.md"):
            shutil.copy2(os.path.join(stage, f), plat)
        with open(os.path.join(plat, "README.md"), "w", encoding="utf-8") as f:
            f.write(f"# {PLATFORM_NPM}\n\nThe {COMMAND} binary and its libraries for Linux x86_64 "
                    f"(glibc {floor[0]}.{floor[1]} or newer). Install `{NAME}`, which runs it; "
                    "this package is its optional dependency.\n")
        write_json(os.path.join(plat, "package.json"), {
            "name": PLATFORM_NPM,
            "version": version,
            "description": f"{COMMAND} binary for Linux x86_64 (glibc {floor[0]}.{floor[1]}+)",
            "license": "MIT",
            "os": ["linux"],
            "cpu": ["x64"],
            "libc": ["glibc"],
            "files": ["bin/", "lib/", "licenses/", "THIRD_PARTY_NOTICES.md"],
            "preferUnplugged": True,
        })
        main = os.path.join(work, "main")
        os.makedirs(os.path.join(main, "bin"))
        launcher = os.path.join(main, "bin", COMMAND + ".js")
        shutil.copy(os.path.join(PACKAGING, "npm", "micro-rag-mcp.js"), launcher)
        os.chmod(launcher, 0o755)
        for f in ("README.md", "LICENSE"):
            shutil.copy2(os.path.join(stage, f), main)
        write_json(os.path.join(main, "package.json"), {
            "name": NAME,
            "version": version,
            "description": SUMMARY,
            "license": "MIT",
            # npx NAME runs the command named like the package.
            "bin": {COMMAND: f"bin/{COMMAND}.js", NAME: f"bin/{COMMAND}.js"},
            # Exact pin: the launcher and the binary come from one build.
            "optionalDependencies": {PLATFORM_NPM: version},
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
    version = check_version(version)
    floor = glibc_floor(elf_files(os.path.join(stage, "bin")) + elf_files(os.path.join(stage, "lib")))
    for p in [wheel(stage, outdir, version, floor), *npm(stage, outdir, version, floor)]:
        print(f"pack: {p} ({os.path.getsize(p) / 1e6:.1f} MB)", file=sys.stderr)


if __name__ == "__main__":
    main()
