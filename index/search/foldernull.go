package search

import (
	"slices"

	"github.com/micro-rag/micro-rag-mcp/index"
)

// NullQueries are queries no folder is expected to answer: questions on
// everyday topics far apart, and strings of no language. How close their
// best passages get is the folder's noise level (folderNull): a folder of
// thousands of chunks offers every query some near match, one of a dozen
// files does not, so the same best cosine says more in the small folder.
// The engine embeds them once per model (Options.NullQueries). The median
// is read, so the few a folder happens to be about do not move it.
var NullQueries = []string{
	"How far is the Moon from the Earth?",
	"Which planets have rings?",
	"What temperature does water freeze at on a mountain?",
	"Who painted the ceiling of the Sistine Chapel?",
	"How many strings does a cello have?",
	"What is the capital of Mongolia?",
	"When did the Roman Empire fall?",
	"How do bees make honey?",
	"Why do leaves change colour in autumn?",
	"How long do elephants live?",
	"What is the offside rule in football?",
	"How many players are on a volleyball team?",
	"How do I knit a scarf?",
	"What wine goes well with grilled fish?",
	"How do I repot an orchid?",
	"What causes the northern lights?",
	"How deep is the Mariana Trench?",
	"Which language has the most native speakers?",
	"How are diamonds formed?",
	"What is the plot of Moby Dick?",
	"How do I train a puppy to sit?",
	"When is the best season to plant tulips?",
	"Why is the sky blue?",
	"How many bones are in the human hand?",
	"fjdkslqp vmxnzb",
	"qpwoeiruty alskdj",
	"zxcvbnm mnbvcxz",
	"hhhh ggggg tttt",
	"wqxr plimb zoft",
	"oiuy lkjh mnbv",
	"kkkkjjjj",
	"bvqz ertypo gnash",
}

// referenceFolderNull is folderNull of the Go-docs evaluation folder
// (2,719 chunks) with the reference model, on whose cosines the gates and
// cuts of noiseCuts were chosen. A quieter folder has its cosines read as
// that much higher (folderShift): the staff handbook (13 chunks) 0.108,
// the ops notes (15) 0.141.
const referenceFolderNull = 0.214

// folderNull is the median, over the null queries (embedded as vecs), of
// each one's best cosine with any chunk of snap: the raw model cosine an
// unrelated query reaches in this folder. ok is false for an empty view
// or no null queries. Read once per view and set of null queries.
func folderNull(snap index.View, vecs [][]float32) (median float64, ok bool, err error) {
	if len(vecs) == 0 || snap.Chunks() == 0 {
		return 0, false, nil
	}
	m, err := snap.Memo(nullKey{&vecs[0][0]}, func() (any, error) { return readFolderNull(snap, vecs) })
	if err != nil || m == nil {
		return 0, false, err
	}
	return m.(float64), true, nil
}

// nullKey keeps folderNull with its view, one per set of null queries
// (first identifies their vectors: one set per model).
type nullKey struct{ first *float32 }

// readFolderNull computes folderNull: nil when no null query has a match.
func readFolderNull(snap index.View, vecs [][]float32) (any, error) {
	best := make([]float64, 0, len(vecs))
	for _, v := range vecs {
		m, err := snap.Nearest(v, 1)
		if err != nil {
			return nil, err
		}
		if len(m) > 0 {
			best = append(best, float64(m[0].Score))
		}
	}
	if len(best) == 0 {
		return nil, nil
	}
	slices.Sort(best)
	median := best[len(best)/2]
	if len(best)%2 == 0 {
		median = (best[len(best)/2-1] + median) / 2
	}
	return median, nil
}
