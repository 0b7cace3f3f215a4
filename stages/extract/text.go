package extract

import "errors"

// readText reads a .txt or .md file in any common encoding (see
// decodeBytes). A 0-byte file is an empty Document, not an error.
func readText(path string, f File, lim Limits) (*Document, error) {
	s, err := readDecoded(path, f, lim)
	if err != nil {
		return nil, err
	}
	return finish(path, s, lim)
}

// readDecoded reads f whole and decodes it (decodeBytes).
func readDecoded(path string, f File, lim Limits) (string, error) {
	b, err := readLimited(path, f, lim)
	if err != nil {
		return "", err
	}
	s, err := decodeBytes(b)
	if errors.Is(err, errBinary) {
		return "", &FileError{Path: path, Reason: "binary file"}
	}
	return s, nil
}
