package extract

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/micro-rag/micro-rag-mcp/internal/bytesize"
)

// lineEnds turns CRLF and lone CR into "\n" and drops NUL bytes. The Unicode
// line and paragraph separators become "\n" and "\n\n" so that the chunker
// sees every break the author made.
var lineEnds = strings.NewReplacer(
	"\r\n", "\n",
	"\r", "\n",
	"\x00", "",
	"\u2028", "\n",
	"\u2029", "\n\n",
)

// normalise makes s valid UTF-8 (U+FFFD for bad bytes), strips a leading
// byte order mark and NULs, converts line ends to "\n" and composes to NFC.
func normalise(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	s = strings.TrimPrefix(s, "\uFEFF")
	if strings.ContainsAny(s, "\r\x00\u2028\u2029") {
		s = lineEnds.Replace(s)
	}
	return norm.NFC.String(s)
}

// finish normalises text and enforces lim.MaxChars (0 means no limit).
func finish(path, text string, lim Limits) (*Document, error) {
	text = normalise(text)
	if lim.MaxChars > 0 && len(text) > lim.MaxChars && utf8.RuneCountInString(text) > lim.MaxChars {
		return nil, &FileError{Path: path, Reason: (&textCapError{limit: lim.MaxChars}).Error()}
	}
	return &Document{Text: text}, nil
}

// checkSize stats the open file and refuses anything but a regular file,
// and files over lim.MaxFileBytes (0 means no limit), before anything is
// read.
func checkSize(path string, f File, lim Limits) (int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, &FileError{Path: path, Reason: "cannot stat file", Err: err}
	}
	if !fi.Mode().IsRegular() {
		return 0, &FileError{Path: path, Reason: "not a regular file"}
	}
	if lim.MaxFileBytes > 0 && fi.Size() > lim.MaxFileBytes {
		return 0, tooLarge(path, fi.Size(), lim.MaxFileBytes)
	}
	return fi.Size(), nil
}

func tooLarge(path string, size, limit int64) error {
	return &FileError{Path: path, Reason: fmt.Sprintf("file too large: %s exceeds limit %s", bytesize.Format(size), bytesize.Format(limit))}
}

// readLimited reads the whole file after checkSize. The read is bounded
// too, because the file may grow between stat and read.
func readLimited(path string, f File, lim Limits) ([]byte, error) {
	size, err := checkSize(path, f, lim)
	if err != nil {
		return nil, err
	}
	var r io.Reader = f
	if lim.MaxFileBytes > 0 {
		r = io.LimitReader(f, lim.MaxFileBytes+1)
	}
	buf := make([]byte, 0, size+1)
	for {
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, &FileError{Path: path, Reason: "read failed", Err: err}
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
	}
	if lim.MaxFileBytes > 0 && int64(len(buf)) > lim.MaxFileBytes {
		return nil, tooLarge(path, int64(len(buf)), lim.MaxFileBytes)
	}
	return buf, nil
}
