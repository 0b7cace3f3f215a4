package extract

import (
	"encoding/csv"
	"errors"
	"io"
	"strconv"
	"strings"
)

// readCSV reads a delimited table (comma, semicolon, tab or pipe, sniffed
// from the first line) in any encoding a text file may use. Each record
// becomes one line. When the first record looks like a header (every field
// non-empty and non-numeric, and more records follow), later records read
// "name: value; name2: value2", so each line carries its own context;
// otherwise fields are joined by "; ". Empty fields are left out, and line
// breaks inside a field become spaces.
func readCSV(path string, f File, lim Limits) (*Document, error) {
	b, err := readLimited(path, f, lim)
	if err != nil {
		return nil, err
	}
	s, err := decodeBytes(b)
	if errors.Is(err, errBinary) {
		return nil, &FileError{Path: path, Reason: "binary file"}
	}
	s = normalise(s)

	r := csv.NewReader(strings.NewReader(s))
	r.Comma = sniffDelimiter(s)
	r.LazyQuotes = true
	r.FieldsPerRecord = -1
	var (
		sb       strings.Builder
		first    []string
		header   []string
		haveRows bool
	)
	for n := 0; ; n++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, &FileError{Path: path, Reason: "malformed CSV", Err: err}
		}
		switch {
		case n == 0:
			first = rec
			continue
		case n == 1:
			if looksLikeHeader(first) {
				header = cleanFields(first)
			} else {
				writeRecord(&sb, nil, first)
			}
		}
		haveRows = true
		writeRecord(&sb, header, rec)
	}
	if !haveRows && first != nil {
		writeRecord(&sb, nil, first)
	}
	return finish(path, sb.String(), lim)
}

// sniffDelimiter picks the most frequent of , ; tab | outside quotes in
// the first line; comma wins ties and empty input.
func sniffDelimiter(s string) rune {
	line, _, _ := strings.Cut(s[:min(len(s), 64<<10)], "\n")
	counts := map[rune]int{}
	quoted := false
	for _, c := range line {
		switch c {
		case '"':
			quoted = !quoted
		case ',', ';', '\t', '|':
			if !quoted {
				counts[c]++
			}
		}
	}
	best := ','
	for _, c := range []rune{';', '\t', '|'} {
		if counts[c] > counts[best] {
			best = c
		}
	}
	return best
}

func looksLikeHeader(rec []string) bool {
	if len(rec) == 0 {
		return false
	}
	for _, f := range rec {
		f = strings.TrimSpace(f)
		if f == "" {
			return false
		}
		if _, err := strconv.ParseFloat(strings.ReplaceAll(f, ",", ""), 64); err == nil {
			return false
		}
	}
	return true
}

// cleanFields trims each field and folds inner white space to one space.
func cleanFields(rec []string) []string {
	out := make([]string, len(rec))
	for i, f := range rec {
		out[i] = strings.Join(strings.Fields(f), " ")
	}
	return out
}

// writeRecord appends one record as a line; header may be nil.
func writeRecord(sb *strings.Builder, header, rec []string) {
	var parts []string
	for i, v := range cleanFields(rec) {
		if v == "" {
			continue
		}
		if i < len(header) {
			v = header[i] + ": " + v
		}
		parts = append(parts, v)
	}
	if len(parts) == 0 {
		return
	}
	if sb.Len() > 0 {
		sb.WriteByte('\n')
	}
	sb.WriteString(strings.Join(parts, "; "))
}
