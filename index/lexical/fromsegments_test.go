package lexical

import (
	"errors"
	"slices"
	"testing"
)

// An index rebuilt from its segments' bytes (as a database backend keeps
// them) scores exactly as the index that wrote them, deletions included;
// bytes that are not the recorded segment are refused.
func TestFromSegmentsMatchesWriter(t *testing.T) {
	first := []Doc{
		{ID: 1, Name: "install", Body: "Run the installer and follow the prompts."},
		{ID: 2, Name: "errors", Heading: "Error codes", Body: "The code QX-7731-B means the disk is full."},
		{ID: 3, Name: "notes", Body: "Errors are rare. The disk was full once."},
	}
	second := []Doc{
		{ID: 4, Name: "disk", Body: "Disk space and disk quotas."},
		{ID: 5, Name: "misc", Body: "Nothing about storage here, only prompts."},
	}
	x1, raw1, err := Empty().Add("a.seg", first, false)
	if err != nil {
		t.Fatal(err)
	}
	// Small second segment: kept beside the first, not merged into it.
	x2, raw2, err := x1.Delete([]int64{3}).Add("b.seg", second[:1], false)
	if err != nil {
		t.Fatal(err)
	}
	if len(x2.Segments()) != 2 {
		t.Fatalf("want two segments, got %v", x2.Segments())
	}
	raws := map[string][]byte{"a.seg": raw1, "b.seg": raw2}
	var segs []*Segment
	for _, ref := range x2.Segments() {
		s, err := DecodeSegment(ref, raws[ref.Name])
		if err != nil {
			t.Fatal(err)
		}
		segs = append(segs, s)
	}
	y := FromSegments(segs, func(id int64) bool { return id != 3 })
	if y.Live() != x2.Live() || y.Dead() != 1 {
		t.Fatalf("rebuilt: %d live, %d dead; writer's: %d live", y.Live(), y.Dead(), x2.Live())
	}
	for _, q := range []string{"disk full", "prompts", "QX-7731-B", "errors"} {
		a, _ := x2.SearchWith(q, 10, []int64{1, 2, 3, 4})
		b, _ := y.SearchWith(q, 10, []int64{1, 2, 3, 4})
		if !slices.Equal(a, b) {
			t.Errorf("%q: rebuilt %v, writer's %v", q, b, a)
		}
	}
	if _, err := DecodeSegment(x2.Segments()[0], raw2); !errors.Is(err, errCorrupt) {
		t.Errorf("b.seg's bytes under a.seg's reference: %v, want errCorrupt", err)
	}
}
