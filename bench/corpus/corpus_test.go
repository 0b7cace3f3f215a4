package corpus

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// digest maps each generated file (relative path) to its content hash.
func digest(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == MetaFile {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if !fi.ModTime().Equal(Mtime) {
			t.Errorf("%s: mtime %v, want %v", p, fi.ModTime(), Mtime)
		}
		rel, _ := filepath.Rel(dir, p)
		sum := sha256.Sum256(b)
		out[rel] = hex.EncodeToString(sum[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestBuildIsDeterministic(t *testing.T) {
	cfg := Config{Seed: 42, Files: 30, Exts: []string{".txt", ".md", ".html", ".csv"}, MinChars: 200, MaxChars: 3000}
	a, b := cfg, cfg
	a.Root, b.Root = t.TempDir(), t.TempDir()
	ca, err := Build(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	cb, err := Build(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	da, db := digest(t, ca.Dir), digest(t, cb.Dir)
	if len(da) != cfg.Files {
		t.Fatalf("built %d files, want %d", len(da), cfg.Files)
	}
	for p, h := range da {
		if db[p] != h {
			t.Errorf("%s differs between two builds of seed %d", p, cfg.Seed)
		}
	}
	if ca.Bytes != cb.Bytes || ca.Bytes == 0 {
		t.Errorf("sizes %d and %d", ca.Bytes, cb.Bytes)
	}
	// Another seed gives another corpus.
	c := cfg
	c.Seed, c.Root = 43, t.TempDir()
	cc, err := Build(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	same := 0
	for p, h := range digest(t, cc.Dir) {
		if da[p] == h {
			same++
		}
	}
	if same == len(da) {
		t.Error("seeds 42 and 43 built the same corpus")
	}
}

func TestBuildReusesCache(t *testing.T) {
	cfg := Config{Seed: 7, Files: 5, Exts: []string{".txt"}, Root: t.TempDir()}
	c1, err := Build(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(c1.Dir, "marker")
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	c2, err := Build(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if c2.Dir != c1.Dir || !strings.HasPrefix(filepath.Base(c2.Dir), "7-5-") {
		t.Fatalf("dirs %s, %s", c1.Dir, c2.Dir)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Error("second Build regenerated a cached corpus")
	}
}

func TestTextIsReal(t *testing.T) {
	cfg := Config{Seed: 1, Files: 20, Exts: []string{".txt"}, MinChars: 2000, MaxChars: 2000, Root: t.TempDir()}
	c, err := Build(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	words := 0
	filepath.WalkDir(c.Dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".txt") {
			b, _ := os.ReadFile(p)
			words += len(strings.Fields(string(b)))
			if len(b) == 0 {
				t.Errorf("%s is empty", p)
			}
		}
		return nil
	})
	if words < 20*150 {
		t.Errorf("only %d words in 20 files of ~2000 bytes", words)
	}
}
