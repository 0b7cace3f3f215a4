package index

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/micro-rag/micro-rag-mcp/index/schema"
)

// The per-file entries live outside files.json, so a commit that changes
// one file does not rewrite every file's entry (docs/storage.md): a base
// list written whole now and then, and a log of the entries changed since,
// appended by each commit. files.json names both and records how many of
// the log's bytes are committed, as it does for manifest.jsonl.
//
// An index written before this layout lists the entries inline in
// files.json ("files"); it loads as before and moves to the new layout at
// its next commit.

// fileListRef is files.json's pointer to the file list.
type fileListRef struct {
	Base         string `json:"base"` // files-<generation>.jsonl: one entry per line, by path
	BaseFiles    int    `json:"base_files"`
	BaseBytes    int64  `json:"base_bytes"`
	BaseChecksum string `json:"base_checksum"`
	// Log is files-<generation>.log.jsonl: changed entries, and removed
	// paths as {"path": …, "removed": true}, in commit order. Bytes past
	// LogBytes are an uncommitted tail.
	Log         string `json:"log"`
	LogEntries  int    `json:"log_entries"`
	LogBytes    int64  `json:"log_bytes"`
	LogChecksum string `json:"log_checksum,omitempty"`
}

type fileLogLine struct {
	schema.FileEntry
	Removed bool `json:"removed,omitempty"`
}

type fileRemoval struct {
	Path    string `json:"path"`
	Removed bool   `json:"removed"`
}

const fileListPrefix = "files-"

func fileListBaseName(gen int64) string { return fmt.Sprintf("%s%010d.jsonl", fileListPrefix, gen) }
func fileListLogName(gen int64) string  { return fmt.Sprintf("%s%010d.log.jsonl", fileListPrefix, gen) }

// isFileListFile tells the base and log files apart from everything else
// in the index folder (files.json has no dash).
func isFileListFile(name string) bool {
	return strings.HasPrefix(name, fileListPrefix) && strings.HasSuffix(name, ".jsonl")
}

// rewriteFileListDue reports whether a commit changing changed paths should
// write the base afresh instead of appending to the log: when there is no
// base yet, or when the log would outgrow a quarter of the files (so the
// log costs at most a quarter of the base to read, and each entry is
// rewritten a bounded number of times, as with the vector segments).
func rewriteFileListDue(ref *fileListRef, changed, files int) bool {
	return ref == nil || ref.LogEntries+changed > max(fileLogMin, files/4)
}

// fileLogMin is the log length below which the base is never rewritten.
var fileLogMin = 1024

// writeFileListBase writes every entry of files, by path, as the base for
// generation gen and returns its reference with an empty log.
func (s *Store) writeFileListBase(files *cowMap[string, *schema.FileEntry], gen int64) (*fileListRef, error) {
	entries := make([]*schema.FileEntry, 0, files.Len())
	for _, f := range files.All() {
		entries = append(entries, f)
	}
	slices.SortFunc(entries, func(a, b *schema.FileEntry) int { return strings.Compare(a.Path, b.Path) })
	ref := &fileListRef{Base: fileListBaseName(gen), BaseFiles: len(entries), Log: fileListLogName(gen)}
	var sum uint32
	err := writeSynced(s.path(ref.Base), func(out io.Writer) error {
		for _, f := range entries {
			line := marshalJSONLine(f)
			sum = extendChecksum(sum, line)
			ref.BaseBytes += int64(len(line))
			if _, err := out.Write(line); err != nil {
				return err
			}
		}
		return nil
	})
	ref.BaseChecksum = formatChecksum(sum)
	return ref, err
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

// readFileList reads the base and the committed log of dir's file list,
// checking sizes and checksums, and returns the entries by path.
func readFileList(dir string, ref *fileListRef) (map[string]*schema.FileEntry, error) {
	files := make(map[string]*schema.FileEntry, ref.BaseFiles)
	n := 0
	err := readJSONLines(filepath.Join(dir, ref.Base), ref.BaseBytes, ref.BaseChecksum, true, func(line []byte) error {
		var f schema.FileEntry
		if err := json.Unmarshal(line, &f); err != nil {
			return err
		}
		files[f.Path] = &f
		n++
		return nil
	})
	if err != nil {
		return nil, err
	}
	if n != ref.BaseFiles || len(files) != n {
		return nil, fmt.Errorf("%s holds %d entries (%d paths), files.json expects %d", ref.Base, n, len(files), ref.BaseFiles)
	}
	if ref.LogBytes == 0 {
		return files, nil
	}
	n = 0
	err = readJSONLines(filepath.Join(dir, ref.Log), ref.LogBytes, ref.LogChecksum, false, func(line []byte) error {
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
		return nil, fmt.Errorf("%s holds %d committed entries, files.json expects %d", ref.Log, n, ref.LogEntries)
	}
	return files, nil
}

// readJSONLines calls each for every line in the first size bytes of path
// and checks their checksum against want. whole also requires the file to
// end there (a log may have an uncommitted tail).
func readJSONLines(path string, size int64, want string, whole bool, each func([]byte) error) error {
	name := filepath.Base(path)
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() < size || (whole && fi.Size() != size) {
		return fmt.Errorf("%s has %d bytes, files.json expects %d", name, fi.Size(), size)
	}
	var sum uint32
	r := bufio.NewReaderSize(io.LimitReader(f, size), 1<<20)
	var off int64
	for off < size {
		line, err := r.ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		if len(line) == 0 || line[len(line)-1] != '\n' {
			return fmt.Errorf("%s torn at byte %d", name, off)
		}
		sum = extendChecksum(sum, line)
		if err := each(line); err != nil {
			return fmt.Errorf("%s line at byte %d: %v", name, off, err)
		}
		off += int64(len(line))
	}
	if got := formatChecksum(sum); got != want {
		return fmt.Errorf("%s has checksum %s, files.json records %s", name, got, want)
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

// removeStaleFileLists removes file list files that ref does not name.
func (s *Store) removeStaleFileLists(ref *fileListRef) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		if !isFileListFile(name) || (ref != nil && (name == ref.Base || name == ref.Log)) {
			continue
		}
		if err := os.Remove(s.path(name)); err != nil && !os.IsNotExist(err) {
			s.log.Warn("removing stale file list", "file", name, "err", err)
		}
	}
}
