package extract

import "errors"

// readText reads a .txt or .md file in any common encoding (see
// decodeBytes). A 0-byte file is an empty Document, not an error.
func readText(path string, f File, lim Limits) (*Document, error) {
	b, err := readLimited(path, f, lim)
	if err != nil {
		return nil, err
	}
	s, err := decodeBytes(b)
	if errors.Is(err, errBinary) {
		return nil, &FileError{Path: path, Reason: "binary file"}
	}
	return finish(path, s, lim)
}
