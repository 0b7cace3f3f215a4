// Package eval is the retrieval evaluation of micro-rag-mcp (make eval): a
// corpus generated from pinned text (the Go toolchain's own documentation
// and Debian's common licences) with planted facts, a committed question
// set labelled with target files and answer phrases, and scoring of the
// built server through MCP exactly as a client sees it.
package eval

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"hash/fnv"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/micro-rag/micro-rag-mcp/bench/corpus"
)

// generatorVersion changes whenever the same sources would give different
// files, so a cached corpus of another version is rebuilt.
const generatorVersion = 1

//go:embed packages.txt
var packageList string

//go:embed planted.json
var plantedJSON []byte

// Plant is a paragraph written into one document, about two thirds of the
// way in, so some facts and identifiers live in exactly one place.
type Plant struct {
	Doc  string `json:"doc"` // Document.Name
	Text string `json:"text"`
}

// GoRoot is the GOROOT of the go command on PATH, and its version.
func GoRoot(ctx context.Context) (root, version string, err error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOROOT", "GOVERSION").Output()
	if err != nil {
		return "", "", fmt.Errorf("eval: go env: %w", err)
	}
	f := strings.Fields(string(out))
	if len(f) != 2 {
		return "", "", fmt.Errorf("eval: go env printed %q", out)
	}
	return f[0], f[1], nil
}

// Documents builds every document of the corpus in memory, in a fixed
// order, with its file type chosen and the planted paragraphs in place.
func Documents(goroot string) ([]Document, error) {
	var docs []Document
	for p := range strings.SplitSeq(packageList, "\n") {
		if p = strings.TrimSpace(p); p == "" || strings.HasPrefix(p, "#") {
			continue
		}
		d, err := packageReference(goroot, p)
		if err != nil {
			return nil, err
		}
		docs = append(docs, d)
	}
	spec, err := goDocFile("go_spec.html")
	if err != nil {
		return nil, err
	}
	docs = append(docs, specSections(spec)...)
	for _, g := range [][2]string{
		{"go_mem.html", "The Go Memory Model"},
		{"asm.html", "A Quick Guide to Go's Assembler"},
		{"godebug.md", "Go, Backwards Compatibility, and GODEBUG"},
	} {
		d, err := guide(g[0], g[1])
		if err != nil {
			return nil, err
		}
		docs = append(docs, d)
	}
	for _, l := range LicenseNames {
		b, err := os.ReadFile(filepath.Join(LicenseDir, l))
		if err != nil {
			return nil, fmt.Errorf("eval: %w", err)
		}
		docs = append(docs, Document{Name: "licenses/" + corpus.Slug(l), Blocks: append([]Block{{Title, "License text: " + l}}, textBlocks(string(b))...)})
	}
	byName := map[string]int{}
	for i := range docs {
		docs[i].Ext = extFor(docs[i].Name)
		if _, dup := byName[docs[i].Name]; dup {
			return nil, fmt.Errorf("eval: two documents named %s", docs[i].Name)
		}
		byName[docs[i].Name] = i
	}
	var plants []Plant
	if err := json.Unmarshal(plantedJSON, &plants); err != nil {
		return nil, fmt.Errorf("eval: planted.json: %w", err)
	}
	for _, p := range plants {
		i, ok := byName[p.Doc]
		if !ok {
			return nil, fmt.Errorf("eval: planted.json names %s, which is not in the corpus", p.Doc)
		}
		b := docs[i].Blocks
		at := max(1, len(b)*2/3)
		docs[i].Blocks = append(b[:at:at], append([]Block{{Para, p.Text}}, b[at:]...)...)
	}
	return docs, nil
}

// extFor picks a document's file type from its name: 3 in 10 plain text,
// 3 Markdown, 2 PDF, 2 DOCX.
func extFor(name string) string {
	h := fnv.New32a()
	h.Write([]byte(name))
	return [...]string{".txt", ".txt", ".txt", ".md", ".md", ".md", ".pdf", ".pdf", ".docx", ".docx"}[h.Sum32()%10]
}

// source is what a document's file is made from: its text for .txt and .md,
// the HTML LibreOffice converts for .pdf and .docx.
func (d Document) source() string {
	switch d.Ext {
	case ".txt":
		return d.Text()
	case ".md":
		return d.Markdown()
	default:
		return d.HTML()
	}
}

// Corpus is a generated folder.
type Corpus struct {
	Dir  string
	Docs []Document
}

// Build returns the corpus under cacheDir (as eval-corpus-<hash>), writing
// it unless a finished copy made from the same inputs is there; older
// copies are removed.
func Build(ctx context.Context, goroot, cacheDir string) (Corpus, error) {
	docs, err := Documents(goroot)
	if err != nil {
		return Corpus{}, err
	}
	h := sha256.New()
	fmt.Fprintf(h, "eval corpus v%d\n", generatorVersion)
	for _, d := range docs {
		src := d.source()
		fmt.Fprintf(h, "%s %d\n%s", d.Path(), len(src), src)
	}
	dir, err := cached(cacheDir, "eval-corpus-", h, generatorVersion, docs, func(out, stage string) error {
		convert := map[string][]corpus.Conversion{}
		for i, d := range docs {
			src := filepath.Join(out, d.Path())
			if d.Ext == ".pdf" || d.Ext == ".docx" {
				dst := src
				src = filepath.Join(stage, d.Ext[1:], fmt.Sprintf("s%04d.html", i))
				convert[d.Ext] = append(convert[d.Ext], corpus.Conversion{Src: src, Dst: dst})
			}
			if err := corpus.WriteFile(src, []byte(d.source())); err != nil {
				return err
			}
		}
		for _, ext := range []string{".pdf", ".docx"} {
			if err := corpus.ConvertOffice(ctx, filepath.Join(stage, "lo"+ext), ext, corpus.HTMLFilter, convert[ext]); err != nil {
				return err
			}
		}
		return nil
	})
	return Corpus{Dir: dir, Docs: docs}, err
}

// cached returns the folder cacheDir/<prefix><hash>, first having write
// fill it unless a finished copy is there. write puts every document's
// file under out and may use stage as scratch space; the files then get
// corpus.Mtime, the list goes to corpus.MetaFile (corpus.Publish), and
// older folders with the same prefix are removed.
func cached(cacheDir, prefix string, h hash.Hash, version int, docs []Document, write func(out, stage string) error) (string, error) {
	dir := filepath.Join(cacheDir, prefix+hex.EncodeToString(h.Sum(nil))[:16])
	if _, err := os.Stat(filepath.Join(dir, corpus.MetaFile)); err == nil {
		return dir, nil
	}
	err := corpus.Publish(dir, func(out, stage string) (any, error) {
		if err := write(out, stage); err != nil {
			return nil, err
		}
		var paths []string
		for _, d := range docs {
			paths = append(paths, d.Path())
			if err := os.Chtimes(filepath.Join(out, d.Path()), corpus.Mtime, corpus.Mtime); err != nil {
				return nil, err
			}
		}
		return map[string]any{"version": version, "files": paths}, nil
	})
	if err != nil {
		return "", err
	}
	old, _ := filepath.Glob(filepath.Join(cacheDir, prefix+"*"))
	for _, o := range old {
		if o != dir {
			os.RemoveAll(o)
		}
	}
	return dir, nil
}
