package ignore

import (
	"bytes"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Names the generated trees and patterns are drawn from, chosen so patterns
// hit often: the same names appear as files and folders at several depths.
var (
	dirNames  = []string{"a", "b", "build", "docs", "drafts", "sub", "x.md", "tmp", "keep"}
	fileNames = []string{"a.md", "b.md", "notes.txt", "draft1.md", "draft2.txt", "keep.md",
		"x.md", "build", "tmp", "report.pdf", "#hash.md", "!bang.md", "sp ace.md", "c.md", "z9.txt"}
	patternKinds = []func(r *rand.Rand) string{
		func(r *rand.Rand) string { return pick(r, fileNames) },
		func(r *rand.Rand) string { return "*." + pick(r, []string{"md", "txt", "pdf"}) },
		func(r *rand.Rand) string { return "!" + pick(r, fileNames) },
		func(r *rand.Rand) string { return "!*." + pick(r, []string{"md", "txt"}) },
		func(r *rand.Rand) string { return "/" + pick(r, append(dirNames, fileNames...)) },
		func(r *rand.Rand) string { return pick(r, dirNames) + "/" },
		func(r *rand.Rand) string { return "!" + pick(r, dirNames) + "/" },
		func(r *rand.Rand) string { return "**/" + pick(r, dirNames) },
		func(r *rand.Rand) string { return "**/" + pick(r, dirNames) + "/" + pick(r, fileNames) },
		func(r *rand.Rand) string { return pick(r, dirNames) + "/**" },
		func(r *rand.Rand) string { return pick(r, dirNames) + "/**/" + pick(r, fileNames) },
		func(r *rand.Rand) string { return pick(r, dirNames) + "/*/" + pick(r, fileNames) },
		func(r *rand.Rand) string { return pick(r, dirNames) + "/" + pick(r, fileNames) },
		func(r *rand.Rand) string { return "/" + pick(r, dirNames) + "/*.md" },
		func(r *rand.Rand) string { return "draft*" },
		func(r *rand.Rand) string { return "[ab].md" },
		func(r *rand.Rand) string { return "[!ab].md" },
		func(r *rand.Rand) string { return "?.md" },
		func(r *rand.Rand) string { return "z[0-9].txt" },
		func(r *rand.Rand) string { return `\#hash.md` },
		func(r *rand.Rand) string { return `\!bang.md` },
		func(r *rand.Rand) string { return "# a comment" },
		func(r *rand.Rand) string { return "" },
		func(r *rand.Rand) string { return pick(r, fileNames) + "   " },
		func(r *rand.Rand) string { return `sp\ ace.md` },
		func(r *rand.Rand) string { return "!" + pick(r, dirNames) + "/**/" + pick(r, fileNames) },
	}
)

func pick(r *rand.Rand, s []string) string { return s[r.IntN(len(s))] }

// genTree writes a random tree of files and .gitignore files under root and
// returns how many patterns it wrote.
func genTree(t *testing.T, root string, r *rand.Rand, ruleFile string) int {
	t.Helper()
	patterns := 0
	var mk func(dir string, depth int)
	mk = func(dir string, depth int) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range fileNames {
			if r.IntN(3) > 0 && !(depth > 0 && r.IntN(2) == 0) {
				if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644); err != nil && !os.IsExist(err) {
					// A name may already be a folder here.
					if !strings.Contains(err.Error(), "is a directory") {
						t.Fatal(err)
					}
				}
			}
		}
		if depth == 0 || r.IntN(2) == 0 {
			n := 8 + r.IntN(30)
			if depth == 0 {
				n = 40
			}
			var b strings.Builder
			for range n {
				b.WriteString(patternKinds[r.IntN(len(patternKinds))](r) + "\n")
			}
			patterns += n
			if err := os.WriteFile(filepath.Join(dir, ruleFile), []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if depth < 3 {
			for _, d := range dirNames {
				if r.IntN(3) == 0 {
					p := filepath.Join(dir, d)
					if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
						continue
					}
					mk(p, depth+1)
				}
			}
		}
	}
	mk(root, 0)
	return patterns
}

// kept lists the files under root (rule files included) that rules leave in,
// checking every path on its own.
func kept(t *testing.T, root string, rules *Rules) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if !rules.Ignored(rel, false) {
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// gitKept asks real git which untracked files it does not ignore.
func gitKept(t *testing.T, root string) []string {
	t.Helper()
	git := func(args ...string) []byte {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		// No user or system configuration: only the tree's .gitignore files.
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir(), "XDG_CONFIG_HOME="+t.TempDir())
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return out
	}
	git("init", "-q")
	out := git("-c", "core.quotepath=off", "ls-files", "-z", "--others", "--exclude-standard")
	var files []string
	for _, f := range bytes.Split(out, []byte{0}) {
		if len(f) > 0 {
			files = append(files, string(f))
		}
	}
	slices.Sort(files)
	return files
}

// gitCheckIgnore asks git check-ignore about each path and returns those it
// calls ignored.
func gitCheckIgnore(t *testing.T, root string, paths []string) map[string]bool {
	t.Helper()
	cmd := exec.Command("git", "check-ignore", "-z", "--stdin")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir(), "XDG_CONFIG_HOME="+t.TempDir())
	cmd.Stdin = strings.NewReader(strings.Join(paths, "\x00") + "\x00")
	out, err := cmd.Output()
	// Exit 1 means none was ignored.
	if ee, ok := err.(*exec.ExitError); err != nil && !(ok && ee.ExitCode() == 1) {
		t.Fatalf("git check-ignore: %v", err)
	}
	ignored := map[string]bool{}
	for _, f := range bytes.Split(out, []byte{0}) {
		if len(f) > 0 {
			ignored[string(f)] = true
		}
	}
	return ignored
}

func allFiles(t *testing.T, root string) []string {
	var out []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	return out
}

// TestMatchesGit compares the rules with real git over random trees holding
// well over 100 patterns each: negation, anchoring, "**", folder-only
// patterns, classes, escapes and nested .gitignore files.
func TestMatchesGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed for this test (make setup installs it)")
	}
	for seed := range uint64(12) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			root := t.TempDir()
			n := genTree(t, root, rand.New(rand.NewPCG(seed, 7)), GitIgnoreFile)
			if n < 100 {
				// Add a deeper file of rules until the tree holds at least 100.
				for ; n < 100; n++ {
					f, _ := os.OpenFile(filepath.Join(root, GitIgnoreFile), os.O_APPEND|os.O_WRONLY, 0)
					fmt.Fprintf(f, "nomatch%d\n", n)
					f.Close()
				}
			}
			rules, err := New(root, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, want := kept(t, root, rules), gitKept(t, root)
			if !slices.Equal(got, want) {
				t.Errorf("%d patterns: kept files differ from git ls-files\nonly ours: %v\nonly git's: %v",
					n, minus(got, want), minus(want, got))
			}
			all := allFiles(t, root)
			if len(want) == 0 || len(want) == len(all) {
				t.Fatalf("git keeps %d of %d files; the tree proves nothing", len(want), len(all))
			}
			t.Logf("%d patterns, git keeps %d of %d files", n, len(want), len(all))
			// check-ignore looks at each path alone; it must agree too.
			ignored := gitCheckIgnore(t, root, all)
			for _, f := range all {
				if rules.Ignored(f, false) != ignored[f] {
					t.Errorf("%s: ours ignored=%v, git check-ignore ignored=%v", f, !ignored[f], ignored[f])
				}
			}
		})
	}
}

// TestRuleFileSameAsGitignore checks .micro-rag-ignore reads like .gitignore.
func TestRuleFileSameAsGitignore(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	genTree(t, a, rand.New(rand.NewPCG(3, 7)), GitIgnoreFile)
	genTree(t, b, rand.New(rand.NewPCG(3, 7)), RuleFile)
	ra, _ := New(a, nil)
	rb, _ := New(b, nil)
	ka, kb := kept(t, a, ra), kept(t, b, rb)
	for i := range kb {
		kb[i] = strings.ReplaceAll(kb[i], RuleFile, GitIgnoreFile)
	}
	if !slices.Equal(ka, kb) {
		t.Errorf("differ:\n.gitignore only: %v\n%s only: %v", minus(ka, kb), RuleFile, minus(kb, ka))
	}
	if len(ka) == 0 {
		t.Fatal("the rules ignored every file; the tree proves nothing")
	}
}

func TestPrecedenceAndBuiltins(t *testing.T) {
	root := t.TempDir()
	write := func(rel, text string) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(".gitignore", "*.md\n")
	write(RuleFile, "!keep.md\n")
	write("sub/.gitignore", "!*.md\n")
	write("sub/"+RuleFile, "secret.md\n")
	rules, err := New(root, []string{"*.tmp", "/sub/forced.md"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		rel     string
		isDir   bool
		ignored bool
	}{
		{"a.md", false, true},
		{"keep.md", false, false},      // .micro-rag-ignore wins over .gitignore in one folder
		{"sub/a.md", false, false},     // a deeper folder's rules win
		{"sub/secret.md", false, true}, // .micro-rag-ignore in the deeper folder
		{"sub/forced.md", false, true}, // --exclude wins over every file
		{"x/y.tmp", false, true},       // --exclude without "/" matches at any depth
		{"notes.txt", false, false},    // nothing matches
		{"node_modules/p/r.txt", false, true},
		{"docs/node_modules", true, true},
		{".git/HEAD", false, true},
		{".hidden/a.txt", false, true},
		{".notes.txt", false, false}, // hidden files stay, as before
	} {
		if got := rules.Ignored(c.rel, c.isDir); got != c.ignored {
			t.Errorf("Ignored(%q, dir=%v) = %v, want %v", c.rel, c.isDir, got, c.ignored)
		}
	}
}

func TestBadExclude(t *testing.T) {
	for _, p := range []string{"[abc", "", "/", "!"} {
		if _, err := New(t.TempDir(), []string{p}); err == nil {
			t.Errorf("New(exclude %q) gave no error", p)
		}
	}
}

func minus(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}
