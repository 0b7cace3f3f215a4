package chunk

import (
	"context"
	"reflect"
	"strings"
	"testing"
)

// leaveText is one short handbook page: four topics, under one chunk's size.
var leaveText = strings.Join([]string{
	"# Leave",
	"",
	"## Annual leave",
	"",
	"A full-time employee receives 27 days of annual leave per calendar year, on top",
	"of public holidays. Part-time staff receive the same amount pro rata.",
	"",
	"## Sickness",
	"",
	"If you are unwell and cannot work, tell your manager by phone or chat before",
	"09:30 on the first day. Sick days are paid in full for the first 52 weeks.",
	"",
	"## Parental leave",
	"",
	"Birth parents receive 20 weeks of fully paid parental leave. The partner",
	"receives 6 weeks fully paid, to be taken within the first year.",
	"",
	"## Other",
	"",
	"- Moving house: 1 day.",
}, "\n")

func TestSplitSections(t *testing.T) {
	tc := pieceCounter{}
	whole, _, _ := SplitLimit(context.Background(), leaveText, nil, Default, tc, 0)
	if len(whole) != 1 {
		t.Fatalf("the page is %d chunks without sections, want 1", len(whole))
	}
	got, truncated, err := SplitSections(context.Background(), leaveText, nil, Default, tc, 0)
	if err != nil || truncated {
		t.Fatalf("err %v, truncated %v", err, truncated)
	}
	mustCheck(t, leaveText, Default, tc, got)
	// The title is too short to stand alone: it goes with the first topic;
	// "## Other" and its one line stay with the topic before it.
	want := []string{"# Leave\n\n## Annual leave", "## Sickness", "## Parental leave\n\nBirth parents receive 20 weeks of fully paid parental leave. The partner\nreceives 6 weeks fully paid, to be taken within the first year.\n\n## Other"}
	if len(got) != len(want) {
		t.Fatalf("%d chunks, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		if !strings.HasPrefix(got[i].Text, w) {
			t.Errorf("chunk %d starts %q, want %q", i, got[i].Text, w)
		}
	}

	capped, truncated, err := SplitSections(context.Background(), leaveText, nil, Default, tc, 2)
	if err != nil || !truncated || !reflect.DeepEqual(capped, got[:2]) {
		t.Errorf("cap 2: truncated %v, err %v, %d chunks", truncated, err, len(capped))
	}

	// Pages count from the document's start, not the section's.
	at := strings.Index(leaveText, "## Parental")
	paged, _, _ := SplitSections(context.Background(), leaveText, []int{0, at}, Default, tc, 0)
	if p := []int{paged[0].Page, paged[1].Page, paged[2].Page}; !reflect.DeepEqual(p, []int{1, 1, 2}) {
		t.Errorf("pages %v, want [1 1 2]", p)
	}

	plain := strings.ReplaceAll(leaveText, "#", "")
	a, _, _ := SplitSections(context.Background(), plain, nil, Default, tc, 0)
	if !reflect.DeepEqual(a, Split(plain, nil, Default, tc)) {
		t.Error("text without headings splits differently from SplitLimit")
	}
}
