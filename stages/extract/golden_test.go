package extract

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGolden compares readers on documents made by real software
// (testdata/golden/make-golden.sh) with hand-written expected text.
func TestGolden(t *testing.T) {
	const dir = "../../testdata/golden"
	wants, err := filepath.Glob(filepath.Join(dir, "*.expected.txt"))
	if err != nil || len(wants) == 0 {
		t.Fatalf("no golden files in %s: %v", dir, err)
	}
	for _, want := range wants {
		doc := strings.TrimSuffix(want, ".expected.txt")
		t.Run(filepath.Base(doc), func(t *testing.T) {
			exp, err := os.ReadFile(want)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Extract(context.Background(), doc, DefaultLimits, testPDF)
			if err != nil {
				t.Fatal(err)
			}
			checkText(t, got.Text)
			if got.Text != string(exp) {
				t.Fatalf("text differs from %s\ngot:\n%s\nwant:\n%s", want, got.Text, exp)
			}
		})
	}
}
