package extract

import "errors"

// readText reads a .txt or .md file in any common encoding (see
// decodeBytes). A 0-byte file is an empty Document, not an error.
func readText(path string, lim Limits) (*Document, error) {
	b, err := readLimited(path, lim)
	if err != nil {
		return nil, err
	}
	s, err := decodeBytes(b)
	if errors.Is(err, errBinary) {
		return nil, &FileError{Path: path, Reason: "binary file"}
	}
	return finish(path, s, lim)
}
