package extract

import "errors"

// readCSV is a placeholder until the csv reader lands.
func readCSV(path string, lim Limits) (*Document, error) {
	return nil, errors.New("csv reader not implemented")
}
