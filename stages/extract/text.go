package extract

import "errors"

// readText is a placeholder until the text reader lands.
func readText(path string, lim Limits) (*Document, error) {
	return nil, errors.New("text reader not implemented")
}
