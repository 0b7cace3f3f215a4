// Package bytesize writes byte counts for people.
package bytesize

import "fmt"

// Format prints n in the largest binary unit that keeps it >= 1, for
// example "300 MB" or "1.5 KB".
func Format(n int64) string {
	units := []struct {
		size int64
		name string
	}{{1 << 30, "GB"}, {1 << 20, "MB"}, {1 << 10, "KB"}}
	for _, u := range units {
		if n >= u.size {
			if n%u.size == 0 {
				return fmt.Sprintf("%d %s", n/u.size, u.name)
			}
			return fmt.Sprintf("%.1f %s", float64(n)/float64(u.size), u.name)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}
