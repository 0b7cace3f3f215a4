package packaging

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/micro-rag/micro-rag-mcp/internal/cachedir"
	"github.com/micro-rag/micro-rag-mcp/internal/model"
)

// TestBundledModel unpacks the lean release tarball and the model's own
// release asset, once into the package's root (beside bin/) and once into
// an empty cache folder, and runs the package's binary with --model
// all-MiniLM-L6-v2-q8 and no network: it must index a small folder, embed
// its queries with the asset's fp32 model, and find the right file. The model's first-run download needs the network, which
// is denied, so only the asset's copy can make that first run work.
func TestBundledModel(t *testing.T) {
	docs := t.TempDir()
	for name, text := range map[string]string{
		"sourdough.md": "# Sourdough\n\nFeed the starter equal weights of flour and water the evening before, and bake once it has doubled.\n",
		"tyres.md":     "# Bicycle tyres\n\nPump road tyres to about 80 psi and check them for cuts after every wet ride.\n",
		"backups.md":   "# Backups\n\nThe database is copied to the storage bucket every night at 02:00; a restore is rehearsed each quarter.\n",
	} {
		if err := os.WriteFile(filepath.Join(docs, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A namespace without a network where the machine allows one; the
	// proxy catches any attempt where it does not.
	offline := exec.Command("unshare", "--net", "true").Run() == nil
	t.Logf("network namespace (unshare --net): %v", offline)

	for _, into := range []string{"package-root", "cache-folder"} {
		t.Run(into, func(t *testing.T) {
			dir := t.TempDir()
			env := clientEnv(t, dir)
			untar(t, dist.tarball, dir)
			pkg := filepath.Join(dir, strings.TrimSuffix(filepath.Base(dist.tarball), ".tar.gz"))
			if _, err := os.Stat(filepath.Join(pkg, "models")); !os.IsNotExist(err) {
				t.Fatalf("the release tarball has a models/ folder (%v); the model belongs in its own asset", err)
			}
			cache := filepath.Join(dir, "empty-cache")
			if err := os.MkdirAll(cache, 0o755); err != nil {
				t.Fatal(err)
			}
			// As the docs say: tar -xzf ASSET -C the package's folder or the cache folder.
			target := map[string]string{"package-root": pkg, "cache-folder": cache}[into]
			untar(t, dist.model, target)

			proxy := newStallProxy(t)
			env = append(env, cachedir.Env+"="+cache, "XDG_CACHE_HOME="+cache,
				"HTTPS_PROXY="+proxy.URL(), "https_proxy="+proxy.URL(), "HTTP_PROXY="+proxy.URL(), "http_proxy="+proxy.URL())
			argv := []string{filepath.Join(pkg, "bin", "micro-rag-mcp")}
			if offline {
				argv = append([]string{"unshare", "--net", "--"}, argv...)
			}
			s := startSession(t, append(argv, "--data-folder", docs, "--index-folder", filepath.Join(dir, "index"),
				"--title", title, "--inst", inst, "--search-mode", "dense", "--model", model.Q8Name), env)
			if _, err := s.initialize(initializeBound); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			top := searchIndexed(t, s, "How often is the database backed up?")
			t.Logf("indexed and searched in %v", time.Since(start).Round(time.Millisecond))
			if filepath.Base(top) != "backups.md" {
				t.Errorf("top result %q, want backups.md", top)
			}
			if n := proxy.connections(); n != 0 {
				t.Errorf("the server opened %d connections through the proxy; the first request: %q", n, proxy.firstRequest(time.Second))
			}
			if strings.Contains(s.stderr.String(), "downloading") {
				t.Errorf("the server speaks of a download:\n%s", s.stderr.String())
			}
			// The asset's fp32 files embed the queries, as a first run
			// online does.
			if !strings.Contains(s.stderr.String(), "queries="+model.FP32Name+" ") {
				t.Errorf("queries are not embedded by the asset's %s:\n%s", model.FP32Name, s.stderr.String())
			}
			// The model was used where it was unpacked: nothing fetched or
			// copied into the other place.
			other := map[string]string{"package-root": cache, "cache-folder": pkg}[into]
			filepath.WalkDir(other, func(path string, d fs.DirEntry, err error) error {
				if err == nil && (d.Name() == model.ONNXName || d.Name() == model.TokenizerName) {
					t.Errorf("a model file appeared in %s: %s", other, path)
				}
				return err
			})
		})
	}
}

// untar unpacks a .tar.gz or .tgz into dir.
func untar(t *testing.T, archive, dir string) {
	t.Helper()
	if out, err := exec.Command("tar", "-xzf", archive, "-C", dir).CombinedOutput(); err != nil {
		t.Fatalf("tar -xzf %s: %v\n%s", archive, err, out)
	}
}

// TestDistRefusesAlteredModel gives scripts/dist.sh a cache whose
// all-MiniLM-L6-v2-q8 differs from its pin: it must stop before building,
// say which file and which pin, and leave dist/ as it was.
func TestDistRefusesAlteredModel(t *testing.T) {
	cache := t.TempDir()
	q8 := filepath.Join(cache, "models", model.Q8Name)
	if err := os.MkdirAll(q8, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{model.ONNXName, model.TokenizerName} {
		if err := os.WriteFile(filepath.Join(q8, f), []byte("not the pinned file\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	checkDistRefuses(t, cache, "refusing to pack "+filepath.Join(q8, model.ONNXName), "MODEL_Q8_ONNX_SHA256", "run make models")
}

// TestDistRefusesAlteredQueryModel: the q8 files as pinned, but the fp32
// query model the asset carries beside them differs from its pin.
func TestDistRefusesAlteredQueryModel(t *testing.T) {
	q8, _ := model.Lookup(model.Q8Name)
	fp32, _ := model.Lookup(model.FP32Name)
	cache := t.TempDir()
	dirs := map[string]string{q8.Name: q8.Dir(), fp32.Name: fp32.Dir()}
	for name, real := range dirs {
		dir := filepath.Join(cache, "models", name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{model.ONNXName, model.TokenizerName} {
			if err := os.Symlink(filepath.Join(real, f), filepath.Join(dir, f)); err != nil {
				t.Fatal(err)
			}
		}
	}
	altered := filepath.Join(cache, "models", fp32.Name, model.ONNXName)
	os.Remove(altered)
	if err := os.WriteFile(altered, []byte("not the pinned file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	checkDistRefuses(t, cache, "refusing to pack "+altered, "MODEL_ONNX_SHA256", "run make setup")
}

// checkDistRefuses runs scripts/dist.sh with cache as the cache folder: it
// must fail before building, its output holding every want, and leave
// dist/ as it was.
func checkDistRefuses(t *testing.T, cache string, wants ...string) {
	t.Helper()
	before, err := os.ReadFile(filepath.Join(dist.dist, "SOURCE"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "scripts/dist.sh")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), cachedir.Env+"="+cache)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("dist.sh packed a model that differs from its pin:\n%s", out)
	}
	for _, want := range wants {
		if !strings.Contains(string(out), want) {
			t.Errorf("dist.sh's error lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "dist: building") {
		t.Errorf("dist.sh built the binary before checking the model:\n%s", out)
	}
	if after, err := os.ReadFile(filepath.Join(dist.dist, "SOURCE")); err != nil || string(after) != string(before) {
		t.Errorf("dist/ changed after a refused build (SOURCE %q, was %q, %v)", after, before, err)
	}
}
