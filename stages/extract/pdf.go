package extract

import "errors"

// readPDF is a placeholder until the pdf reader lands.
func readPDF(path string, lim Limits) (*Document, error) {
	return nil, errors.New("pdf reader not implemented")
}
