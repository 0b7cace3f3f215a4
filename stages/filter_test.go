package stages

import (
	"testing"

	"github.com/micro-rag/micro-rag-mcp/index/schema"
)

func TestFilter(t *testing.T) {
	before := map[string]*schema.FileEntry{
		"same.md":  {Path: "same.md", Mtime: 10, Size: 5},
		"newer.md": {Path: "newer.md", Mtime: 10, Size: 5},
		"grown.md": {Path: "grown.md", Mtime: 10, Size: 5},
	}
	for _, tc := range []struct {
		rel   string
		mtime float64
		size  int64
		force bool
		want  Kind
	}{
		{"same.md", 10, 5, false, Unchanged},
		{"same.md", 10, 5, true, Changed},
		{"newer.md", 11, 5, false, Changed},
		{"grown.md", 10, 6, false, Changed},
		{"new.md", 10, 5, false, Changed},
	} {
		job := &FileJob{Rel: tc.rel, Mtime: tc.mtime, Size: tc.size}
		Filter{Before: before, Force: tc.force}.Apply(job)
		if job.Kind != tc.want {
			t.Errorf("%s force=%v: kind %d, want %d", tc.rel, tc.force, job.Kind, tc.want)
		}
		if (job.Old != nil) != (before[tc.rel] != nil) {
			t.Errorf("%s: Old = %v", tc.rel, job.Old)
		}
	}
}
