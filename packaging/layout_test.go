package packaging

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/internal/model"
)

// maxCompressed is the bound on each download.
const maxCompressed = 40 << 20

// entry is one file of an archive.
type entry struct {
	mode    os.FileMode
	regular bool
	size    int64
	sha256  []byte
	data    []byte // small files only
}

func readEntry(r io.Reader, mode os.FileMode, regular bool, size int64) (entry, error) {
	h := sha256.New()
	var small strings.Builder
	w := io.Writer(h)
	if size < 1<<20 {
		w = io.MultiWriter(h, &small)
	}
	if _, err := io.Copy(w, r); err != nil {
		return entry{}, err
	}
	return entry{mode: mode, regular: regular, size: size, sha256: h.Sum(nil), data: []byte(small.String())}, nil
}

func tarFiles(t *testing.T, path string) map[string]entry {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]entry{}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeDir {
			continue
		}
		e, err := readEntry(tr, h.FileInfo().Mode(), h.Typeflag == tar.TypeReg, h.Size)
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name] = e
	}
}

func zipFiles(t *testing.T, path string) map[string]entry {
	t.Helper()
	z, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	files := map[string]entry{}
	for _, f := range z.File {
		r, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		e, err := readEntry(r, f.Mode(), f.Mode().IsRegular(), int64(f.UncompressedSize64))
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		files[f.Name] = e
	}
	return files
}

// TestLayout checks what each package holds: the same binary and libraries
// as the tarball, as real files with the binary executable, no model, the
// wheel's metadata and hashes, the npm manifests, and the sizes; that the
// model's own asset holds the two pinned files and nothing else; and that
// the files for the model's release are the ones a first run accepts.
func TestLayout(t *testing.T) {
	for _, p := range []string{dist.tarball, dist.wheel, dist.platform, dist.launcher} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %.1f MB", filepath.Base(p), float64(st.Size())/1e6)
		if st.Size() > maxCompressed {
			t.Errorf("%s is %d bytes, over %d", filepath.Base(p), st.Size(), maxCompressed)
		}
	}

	tarball := tarFiles(t, dist.tarball)
	top := strings.TrimSuffix(filepath.Base(dist.tarball), ".tar.gz") + "/"
	wheel := zipFiles(t, dist.wheel)
	platform := tarFiles(t, dist.platform)
	native := []string{"bin/micro-rag-mcp", "lib/libonnxruntime.so", "lib/libquadmath.so.0"}
	for _, rel := range native {
		want, ok := tarball[top+rel]
		if !ok {
			t.Fatalf("the tarball has no %s", rel)
		}
		for _, c := range []struct {
			pkg   string
			files map[string]entry
			name  string
		}{{"wheel", wheel, "micro_rag_mcp_go/" + rel}, {"npm platform package", platform, "package/" + rel}} {
			got, ok := c.files[c.name]
			switch {
			case !ok:
				t.Errorf("%s: no %s", c.pkg, c.name)
			case !got.regular:
				t.Errorf("%s: %s is not a regular file (%v)", c.pkg, c.name, got.mode)
			case string(got.sha256) != string(want.sha256):
				t.Errorf("%s: %s differs from the tarball's", c.pkg, c.name)
			case strings.HasPrefix(rel, "bin/") && got.mode.Perm() != 0o755:
				t.Errorf("%s: %s has mode %v, want 0755", c.pkg, c.name, got.mode.Perm())
			}
		}
	}
	// The model goes out as its own asset: every user downloads the
	// packages, few use the int8 model (docs/int8.md).
	for pkg, files := range map[string]map[string]entry{"tarball": tarball, "wheel": wheel, "npm platform package": platform} {
		for name := range files {
			if strings.Contains("/"+name, "/models/") {
				t.Errorf("%s: %s; the model belongs in its own asset", pkg, name)
			}
		}
	}
	checkWheel(t, wheel)
	checkNPM(t, platform)
	checkModelAsset(t)
	checkModelRelease(t)
}

// checkModelAsset checks the model's release asset: exactly the two files
// under models/all-MiniLM-L6-v2-q8/ and the two of the fp32 model its
// queries are embedded by, with scripts/versions.env's hashes, and its
// .sha256 beside it as the tarball has one.
func checkModelAsset(t *testing.T) {
	name := filepath.Base(dist.model)
	q8 := "models/" + model.Q8Name + "/"
	fp32 := "models/" + model.FP32Name + "/"
	files := tarFiles(t, dist.model)
	pins := map[string]string{
		q8 + model.ONNXName: "MODEL_Q8_ONNX_SHA256", q8 + model.TokenizerName: "MODEL_TOKENIZER_SHA256",
		fp32 + model.ONNXName: "MODEL_ONNX_SHA256", fp32 + model.TokenizerName: "MODEL_TOKENIZER_SHA256",
	}
	for member, e := range files {
		pinName, ok := pins[member]
		switch {
		case !ok:
			t.Errorf("%s holds %s; want only model.onnx and tokenizer.json under %s and %s", name, member, q8, fp32)
		case !e.regular || e.mode.Perm() != 0o644:
			t.Errorf("%s: %s is not a regular 0644 file (%v)", name, member, e.mode)
		case hex.EncodeToString(e.sha256) != pin(t, pinName):
			t.Errorf("%s: %s has SHA-256 %x, scripts/versions.env's %s is %s", name, member, e.sha256, pinName, pin(t, pinName))
		}
	}
	for member := range pins {
		if _, ok := files[member]; !ok {
			t.Errorf("%s has no %s", name, member)
		}
	}
	sum, err := os.ReadFile(dist.model + ".sha256")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(dist.model)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(sum), fmt.Sprintf("%x  %s\n", sha256.Sum256(b), name); got != want {
		t.Errorf("%s.sha256 is %q, want %q", name, got, want)
	}
	t.Logf("%s: %.1f MB", name, float64(len(b))/1e6)
}

// checkModelRelease checks dist/<tag>/, the assets of the release a first
// run downloads all-MiniLM-L6-v2-q8 from: named by the tag and the file
// names of model.Q8Source, exactly its two files, each of the size and
// SHA-256 pinned there (and in scripts/versions.env: internal/model's
// TestQ8PinsMatchVersionsEnv).
func checkModelRelease(t *testing.T) {
	src := model.Q8Source
	dir := filepath.Join(dist.dist, src.Revision)
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("the release's assets: %v", err)
	}
	if len(ents) != len(src.Files) {
		t.Errorf("dist/%s holds %d files, want %d", src.Revision, len(ents), len(src.Files))
	}
	for _, f := range src.Files {
		p := filepath.Join(dir, f.Remote)
		st, err := os.Stat(p)
		if err != nil {
			t.Error(err)
			continue
		}
		sum, err := model.FileSHA256(p)
		if err != nil || sum != f.SHA256 || st.Size() != f.Size {
			t.Errorf("dist/%s/%s: %d bytes, SHA-256 %s (%v); a first run wants %d bytes, %s", src.Revision, f.Remote, st.Size(), sum, err, f.Size, f.SHA256)
		}
	}
}

// pin is the value of name in scripts/versions.env.
func pin(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "scripts", "versions.env"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, name+"="); ok {
			return strings.Trim(v, `"`)
		}
	}
	t.Fatalf("scripts/versions.env has no %s", name)
	return ""
}

func checkWheel(t *testing.T, files map[string]entry) {
	name := filepath.Base(dist.wheel)
	m := regexp.MustCompile(`^micro_rag_mcp_go-([^-]+)-(py3-none-manylinux_\d+_\d+_x86_64)\.whl$`).FindStringSubmatch(name)
	if m == nil {
		t.Fatalf("wheel name %s is not micro_rag_mcp_go-VERSION-py3-none-manylinux_X_Y_x86_64.whl", name)
	}
	version, tag := m[1], m[2]
	if version != dist.version {
		t.Errorf("wheel version %s, want the build's %s unchanged", version, dist.version)
	}
	info := "micro_rag_mcp_go-" + version + ".dist-info/"
	for _, c := range []struct{ file, want string }{
		{"WHEEL", "Root-Is-Purelib: false\n"},
		{"WHEEL", "Tag: " + tag + "\n"},
		{"METADATA", "Name: micro-rag-mcp-go\n"},
		{"METADATA", "Version: " + version + "\n"},
		{"entry_points.txt", "[console_scripts]\nmicro-rag-mcp = micro_rag_mcp_go:main\nmicro-rag-mcp-go = micro_rag_mcp_go:main\n"},
	} {
		if !strings.Contains(string(files[info+c.file].data), c.want) {
			t.Errorf("%s lacks %q", c.file, c.want)
		}
	}
	// RECORD names every other file with its hash and size.
	recorded := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(string(files[info+"RECORD"].data)))
	for sc.Scan() {
		parts := strings.Split(sc.Text(), ",")
		if len(parts) != 3 {
			t.Fatalf("RECORD line %q", sc.Text())
		}
		recorded[parts[0]] = true
		if parts[0] == info+"RECORD" {
			continue
		}
		e, ok := files[parts[0]]
		sum := "sha256=" + base64.RawURLEncoding.EncodeToString(e.sha256)
		if !ok || parts[1] != sum || parts[2] != strconv.FormatInt(e.size, 10) {
			t.Errorf("RECORD line %q does not match the file (%s, %d bytes)", sc.Text(), sum, e.size)
		}
	}
	for f := range files {
		if !recorded[f] {
			t.Errorf("RECORD does not list %s", f)
		}
	}
	// The tag is the glibc floor; auditwheel reads it from the ELF files.
	cmd := exec.Command("python3", "-m", "auditwheel", "show", dist.wheel)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+toolsDir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("auditwheel show: %v\n%s", err, out)
	}
	platform := strings.TrimPrefix(tag, "py3-none-")
	// auditwheel wraps its lines: compare with the spaces normalised.
	if !strings.Contains(strings.Join(strings.Fields(string(out)), " "), `consistent with the following platform tag: "`+platform+`"`) {
		t.Errorf("auditwheel does not find %s:\n%s", platform, out)
	}
}

func checkNPM(t *testing.T, platformFiles map[string]entry) {
	plat, launcher := npmManifest(t, dist.platform), npmManifest(t, dist.launcher)
	if plat.Name != "micro-rag-mcp-go-linux-x64-gnu" || strings.Join(plat.OS, ",") != "linux" ||
		strings.Join(plat.CPU, ",") != "x64" || strings.Join(plat.Libc, ",") != "glibc" {
		t.Errorf("platform package.json: %+v", plat)
	}
	if launcher.Name != "micro-rag-mcp-go" || launcher.Bin["micro-rag-mcp"] != "bin/micro-rag-mcp.js" ||
		launcher.Bin["micro-rag-mcp-go"] != "bin/micro-rag-mcp.js" {
		t.Errorf("launcher package.json: %+v", launcher)
	}
	if launcher.Version != dist.version {
		t.Errorf("npm version %s, want the build's %s unchanged", launcher.Version, dist.version)
	}
	for _, p := range []string{dist.tarball, dist.wheel, dist.platform, dist.launcher} {
		if !strings.Contains(filepath.Base(p), "-"+dist.version+"-") && !strings.HasSuffix(p, "-"+dist.version+".tgz") {
			t.Errorf("%s does not carry the version %s", filepath.Base(p), dist.version)
		}
	}
	if len(launcher.OptionalDependencies) != 1 || launcher.OptionalDependencies[plat.Name] != plat.Version || plat.Version != launcher.Version {
		t.Errorf("launcher %s pins %v, want exactly %s@%s", launcher.Version, launcher.OptionalDependencies, plat.Name, plat.Version)
	}
	floor := regexp.MustCompile(`manylinux_(\d+)_(\d+)_`).FindStringSubmatch(dist.wheel)
	if floor == nil || launcher.GlibcFloor != floor[1]+"."+floor[2] {
		t.Errorf("launcher's glibcFloor %q does not match the wheel's tag %s", launcher.GlibcFloor, filepath.Base(dist.wheel))
	}
	for name, e := range platformFiles {
		if !e.regular {
			t.Errorf("platform package: %s is not a regular file", name)
		}
	}
}
