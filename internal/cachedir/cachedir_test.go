package cachedir

import (
	"path/filepath"
	"testing"
)

func TestPathOrder(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv(Env, "")
	t.Setenv("XDG_CACHE_HOME", "")
	if got, want := Path(), filepath.Join(home, ".cache", "micro-rag-mcp"); got != want {
		t.Errorf("HOME only: %q, want %q", got, want)
	}
	t.Setenv("XDG_CACHE_HOME", "relative/ignored")
	if got, want := Path(), filepath.Join(home, ".cache", "micro-rag-mcp"); got != want {
		t.Errorf("relative XDG: %q, want %q", got, want)
	}
	t.Setenv("XDG_CACHE_HOME", "/xdg")
	if got := Path(); got != "/xdg/micro-rag-mcp" {
		t.Errorf("XDG: %q", got)
	}
	t.Setenv(Env, "/explicit")
	if got := Path(); got != "/explicit" {
		t.Errorf("override: %q", got)
	}
}
