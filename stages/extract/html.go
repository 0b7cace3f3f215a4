package extract

import "errors"

// readHTML is a placeholder until the html reader lands.
func readHTML(path string, lim Limits) (*Document, error) {
	return nil, errors.New("html reader not implemented")
}
