package extract

import (
	"bytes"
	"strings"
	"testing"
)

// TestBinaryTailFailsEveryTextPath: the binary check covers the whole
// file, not its first 8 KB, and every text path decides alike: a binary
// tail after plenty of text fails the file, while a few NULs (dropped) or
// stray bytes at the end do not.
func TestBinaryTailFailsEveryTextPath(t *testing.T) {
	text := bytes.Repeat([]byte("the pilot boards at the buoy, 4.1 knots on the flood\n"), 400) // 21 KB
	binary := make([]byte, 12<<10)
	for i := range binary {
		binary[i] = byte(i * 7 % 32) // NULs and control bytes
	}
	for _, tc := range []struct {
		name   string
		data   []byte
		binary bool
	}{
		{"binary tail", append(append([]byte{}, text...), binary...), true},
		{"binary block in the middle", append(append(append([]byte{}, text...), binary...), text...), true},
		{"NULs after 8 KB", append(append(append([]byte{}, text[:9000]...), make([]byte, 3000)...), text[:2000]...), true},
		{"a few NULs", append(append(append([]byte{}, text[:4000]...), make([]byte, 10)...), text[4000:]...), false},
		{"stray NULs at the end", append(append([]byte{}, text...), 0, 0, 0, 0, 0, 0), false},
		{"invalid UTF-8 tail", append(append([]byte{}, text...), bytes.Repeat([]byte{0xE9, 'a'}, 3000)...), false},
	} {
		for _, name := range []string{"README", "notes.txt", "notes.md", "data.csv", "app.log", "main.go"} {
			t.Run(tc.name+"/"+name, func(t *testing.T) {
				doc, err := readBytes(t, name, tc.data)
				if tc.binary {
					wantFileError(t, err, "binary")
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if strings.ContainsRune(doc.Text, 0) || !strings.Contains(doc.Text, "pilot boards") {
					t.Errorf("text %q", trunc(doc.Text))
				}
			})
		}
	}
}
