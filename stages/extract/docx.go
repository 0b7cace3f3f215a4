package extract

import "errors"

// readDOCX is a placeholder until the docx reader lands.
func readDOCX(path string, lim Limits) (*Document, error) {
	return nil, errors.New("docx reader not implemented")
}
