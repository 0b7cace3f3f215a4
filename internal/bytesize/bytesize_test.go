package bytesize

import "testing"

func TestFormat(t *testing.T) {
	for n, want := range map[int64]string{0: "0 bytes", 1023: "1023 bytes", 1536: "1.5 KB",
		300 << 20: "300 MB", 256 << 20: "256 MB", 1 << 30: "1 GB"} {
		if got := Format(n); got != want {
			t.Errorf("Format(%d) = %q, want %q", n, got, want)
		}
	}
}
