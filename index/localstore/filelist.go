package localstore

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/index/schema"
)

// files.json keeps the layout of the first version (SPEC: every file's
// entry, with the commit record around them), but a commit no longer
// rewrites it: it is a checkpoint, written whole when the log of entries
// changed since has grown, and otherwise left alone. The commit point is
// commit.json, which records the checkpoint's size and checksum and how
// many bytes of the log files-<checkpoint>.log.jsonl are committed
// (docs/storage.md). files.json on its own is therefore always a complete,
// consistent index state: the one as of its checkpoint.
//
// An index without commit.json (written before it, or whose first commit
// was rolled forward from files.json.new) is read from files.json alone,
// as before, and gets commit.json at its next commit.

type fileLogLine struct {
	schema.FileEntry
	Removed bool `json:"removed,omitempty"`
}

type fileRemoval struct {
	Path    string `json:"path"`
	Removed bool   `json:"removed"`
}

// checkpointDue reports whether a commit changing changed paths should
// write files.json afresh instead of appending to the log: when there is
// no checkpoint in this layout yet, or when the log would outgrow a quarter
// of the files (so the log costs at most a quarter of files.json to read,
// and each entry is rewritten a bounded number of times, as with the
// vector segments).
// logMin is the log length below which files.json is never rewritten
// (Options.FileLogMin).
func checkpointDue(ref *fileListRef, changed, files, logMin int) bool {
	return ref == nil || ref.LogEntries+changed > max(logMin, files/4)
}

// writeCheckpoint writes doc (the commit being made) with every entry of
// files, by path, as files.json.new and returns the reference to it with
// an empty log.
func (s *Store) writeCheckpoint(doc commitRecord, files *cowMap[string, *schema.FileEntry]) (*fileListRef, error) {
	doc.FileList = nil
	doc.Files = make([]*schema.FileEntry, 0, files.Len())
	for _, f := range files.All() {
		doc.Files = append(doc.Files, f)
	}
	slices.SortFunc(doc.Files, func(a, b *schema.FileEntry) int { return strings.Compare(a.Path, b.Path) })
	raw, err := marshalIndent(&doc)
	if err != nil {
		return nil, err
	}
	if err := writeSynced(s.path(FilesFile+newSuffix), func(out io.Writer) error { _, err := out.Write(raw); return err }); err != nil {
		return nil, err
	}
	return &fileListRef{
		Generation: doc.Generation, Files: len(doc.Files), Bytes: int64(len(raw)),
		Checksum: formatChecksum(extendChecksum(0, raw)), Log: fileLogName(doc.Generation),
	}, nil
}

// appendFileLog appends the entries of changed paths (or their removal)
// after the committed log bytes and returns the reference that commits them.
func (s *Store) appendFileLog(ref fileListRef, files *cowMap[string, *schema.FileEntry], changed []string) (*fileListRef, error) {
	var buf bytes.Buffer
	for _, p := range changed {
		if f, ok := files.Get(p); ok {
			buf.Write(marshalJSONLine(f))
		} else {
			buf.Write(marshalJSONLine(fileRemoval{Path: p, Removed: true}))
		}
	}
	sum, ok := parseChecksum(ref.LogChecksum)
	if !ok && ref.LogBytes > 0 {
		return nil, errors.New("commit: the file log has no checksum")
	}
	if err := appendSynced(s.path(ref.Log), ref.LogBytes, buf.Bytes()); err != nil {
		return nil, fmt.Errorf("append file log: %w", err)
	}
	ref.LogEntries += len(changed)
	ref.LogBytes += int64(buf.Len())
	ref.LogChecksum = formatChecksum(extendChecksum(sum, buf.Bytes()))
	return &ref, nil
}

// readCommitted reads dir's commit record: commit.json with the entries
// from files.json and the log, or files.json alone in the older layout.
// notExist is true when neither file exists (an index never committed).
//
// A writer in another process may replace files.json or the log between
// the reads; then commit.json has changed too, and it is read again.
func readCommitted(dir string) (commitRecord, error) {
	var files map[string]*schema.FileEntry
	var doc commitRecord
	for attempt := 0; ; attempt++ {
		before, _ := os.Stat(filepath.Join(dir, CommitFile))
		var err error
		doc, err = readCommitRecord(dir)
		if err != nil || doc.FileList == nil {
			return doc, err
		}
		if files, err = readFileList(dir, doc.FileList); err == nil {
			break
		}
		after, _ := os.Stat(filepath.Join(dir, CommitFile))
		if attempt == 2 || before == nil || after == nil || os.SameFile(before, after) {
			if errors.Is(err, fs.ErrPermission) {
				return doc, fmt.Errorf("%w: %w", index.ErrInconsistent, err) // notDamage unwraps it
			}
			// Not %w: a missing file list is damage, not an index never
			// committed (fs.ErrNotExist), which serves nothing silently.
			return doc, fmt.Errorf("%w: %v", index.ErrInconsistent, err)
		}
	}
	doc.Files = slices.Collect(maps.Values(files)) // in no order; ReadSummary sorts
	return doc, nil
}

// readCommitRecord reads commit.json, or files.json in the older layout,
// without the entries that commit.json's file list names.
func readCommitRecord(dir string) (doc commitRecord, err error) {
	raw, err := os.ReadFile(filepath.Join(dir, CommitFile))
	if errors.Is(err, fs.ErrNotExist) {
		raw, err = os.ReadFile(filepath.Join(dir, FilesFile))
		if err != nil {
			return doc, err
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			return doc, fmt.Errorf("%w: files.json: %v", index.ErrInconsistent, err)
		}
		doc.FileList = nil
		return doc, nil
	}
	if err != nil {
		return doc, err
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return doc, fmt.Errorf("%w: commit.json: %v", index.ErrInconsistent, err)
	}
	if doc.FileList == nil {
		return doc, fmt.Errorf("%w: commit.json names no file list", index.ErrInconsistent)
	}
	doc.Files = nil
	return doc, nil
}

// readFileList reads the checkpoint and the committed log, checking sizes
// and checksums, and returns the entries by path.
func readFileList(dir string, ref *fileListRef) (map[string]*schema.FileEntry, error) {
	raw, err := os.ReadFile(filepath.Join(dir, FilesFile))
	if err != nil {
		return nil, err
	}
	if int64(len(raw)) != ref.Bytes {
		return nil, fmt.Errorf("files.json has %d bytes, commit.json expects %d", len(raw), ref.Bytes)
	}
	if got := formatChecksum(extendChecksum(0, raw)); got != ref.Checksum {
		return nil, fmt.Errorf("files.json has checksum %s, commit.json records %s", got, ref.Checksum)
	}
	var checkpoint commitRecord
	if err := json.Unmarshal(raw, &checkpoint); err != nil {
		return nil, fmt.Errorf("files.json: %v", err)
	}
	if checkpoint.Generation != ref.Generation || len(checkpoint.Files) != ref.Files {
		return nil, fmt.Errorf("files.json is generation %d with %d files, commit.json expects %d with %d", checkpoint.Generation, len(checkpoint.Files), ref.Generation, ref.Files)
	}
	files := make(map[string]*schema.FileEntry, len(checkpoint.Files))
	for _, f := range checkpoint.Files {
		files[f.Path] = f
	}
	if ref.LogBytes == 0 {
		return files, nil
	}
	n := 0
	err = readJSONLines(filepath.Join(dir, ref.Log), ref.LogBytes, ref.LogChecksum, func(line []byte) error {
		var l fileLogLine
		if err := json.Unmarshal(line, &l); err != nil {
			return err
		}
		if l.Removed {
			delete(files, l.Path)
		} else {
			files[l.Path] = &l.FileEntry
		}
		n++
		return nil
	})
	if err != nil {
		return nil, err
	}
	if n != ref.LogEntries {
		return nil, fmt.Errorf("%s holds %d committed entries, commit.json expects %d", ref.Log, n, ref.LogEntries)
	}
	return files, nil
}

// readJSONLines calls each for every line in the first size bytes of path
// and checks their checksum against want; bytes after them are ignored.
func readJSONLines(path string, size int64, want string, each func([]byte) error) error {
	name := filepath.Base(path)
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var sum uint32
	r := bufio.NewReaderSize(io.LimitReader(f, size), 1<<20)
	var off int64
	for off < size {
		line, err := r.ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		if len(line) == 0 || line[len(line)-1] != '\n' {
			return fmt.Errorf("%s ends at byte %d, commit.json expects %d", name, off+int64(len(line)), size)
		}
		sum = extendChecksum(sum, line)
		if err := each(line); err != nil {
			return fmt.Errorf("%s line at byte %d: %v", name, off, err)
		}
		off += int64(len(line))
	}
	if got := formatChecksum(sum); got != want {
		return fmt.Errorf("%s has checksum %s, commit.json records %s", name, got, want)
	}
	return nil
}

// cutFileLog drops an uncommitted tail of the file log.
func (s *Store) cutFileLog(ref *fileListRef) error {
	if ref == nil {
		return nil
	}
	fi, err := os.Stat(s.path(ref.Log))
	if err != nil || fi.Size() <= ref.LogBytes {
		return nil
	}
	s.log.Warn("cutting uncommitted file log tail", "file", ref.Log, "bytes", fi.Size()-ref.LogBytes)
	return os.Truncate(s.path(ref.Log), ref.LogBytes)
}
