package eval

import (
	"context"
	"io/fs"
	"path/filepath"
	"strings"
)

// The small-folder sets: a staff handbook and a platform team's ops notes,
// 13 and 14 files written for the evaluation (bench/eval/folders), so that
// a score must mean something when almost no query word occurs in the
// folder. In these sets a paraphrase question shares no content word with
// its target file, inflections counted as shared (TestFolderParaphrases);
// keyword and identifier questions may use the file's words.
const (
	HandbookDir = "bench/eval/folders/handbook"
	OpsNotesDir = "bench/eval/folders/opsnotes"
)

// FolderCorpus is a committed folder as it is, relative to the
// repository's root; from names it in the report.
func FolderCorpus(dir, from string) func(ctx context.Context, cacheDir string) (Corpus, string, error) {
	return func(ctx context.Context, cacheDir string) (Corpus, string, error) {
		c := Corpus{Dir: dir}
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, err := filepath.Rel(dir, p)
			ext := filepath.Ext(rel)
			c.Docs = append(c.Docs, Document{Name: filepath.ToSlash(strings.TrimSuffix(rel, ext)), Ext: ext})
			return err
		})
		return c, from, err
	}
}
