package packaging

import (
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestNpxByNameResolvesHere runs the README's published npm form, npx -y
// micro-rag-mcp-go, against a registry on the loopback that serves the two
// npm packages built here under their names, as the public registry will
// once they are published: npm must resolve the launcher by name, its
// exact-pinned platform package through the registry, and run this build.
func TestNpxByNameResolvesHere(t *testing.T) {
	files := map[string]string{} // tarball name -> path
	packuments := map[string][]byte{}
	var mu sync.RWMutex // the server may be asked while the maps are filled
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.RLock()
		defer mu.RUnlock()
		name := strings.TrimPrefix(r.URL.Path, "/")
		if p, ok := files[strings.TrimPrefix(name, "-/")]; ok {
			http.ServeFile(w, r, p)
			return
		}
		if doc, ok := packuments[name]; ok {
			w.Header().Set("Content-Type", "application/json")
			w.Write(doc)
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	for _, tgz := range []string{dist.platform, dist.launcher} {
		var pkg map[string]any
		if err := json.Unmarshal(tarFiles(t, tgz)["package/package.json"].data, &pkg); err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile(tgz)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha512.Sum512(raw)
		// Publishing drops semver's build metadata (the +part of a dev
		// build): the registry lists X.Y.Z, the tarball keeps its own.
		name, version := pkg["name"].(string), published(pkg["version"].(string))
		pkg["version"] = version
		if deps, ok := pkg["optionalDependencies"].(map[string]any); ok {
			for k, v := range deps {
				deps[k] = published(v.(string))
			}
		}
		mu.Lock()
		files[filepath.Base(tgz)] = tgz
		mu.Unlock()
		pkg["dist"] = map[string]string{
			"tarball":   srv.URL + "/-/" + filepath.Base(tgz),
			"integrity": "sha512-" + base64.StdEncoding.EncodeToString(sum[:]),
		}
		doc, err := json.Marshal(map[string]any{
			"name": name, "dist-tags": map[string]string{"latest": version},
			"versions": map[string]any{version: pkg},
		})
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		packuments[name] = doc
		mu.Unlock()
	}

	dir := t.TempDir()
	cmd := exec.Command("npx", "-y", "micro-rag-mcp-go", "--version")
	cmd.Dir = dir
	cmd.Env = append(clientEnv(t, dir), "npm_config_registry="+srv.URL+"/")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("npx -y micro-rag-mcp-go --version: %v\n%s", err, out)
	}
	if want := "micro-rag-mcp " + dist.version + " "; !strings.Contains(string(out), want) {
		t.Errorf("npx -y micro-rag-mcp-go --version printed %q, want %q", out, want)
	}
}

// published is version as the registry keeps it: without build metadata.
func published(version string) string {
	v, _, _ := strings.Cut(version, "+")
	return v
}
