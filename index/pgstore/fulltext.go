package pgstore

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"regexp"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/index/lexical"
)

// Keyword sides a Store can serve (Options.Keyword, ?keyword= in the URL).
const (
	// KeywordSegments is the project's own BM25F (package lexical), its
	// segments kept in the lexical table: the local backend's scores.
	KeywordSegments = "segments"
	// KeywordFullText is PostgreSQL full text: a generated tsvector column
	// on chunks with a GIN index, matched with an OR of the query's
	// lexemes, scored by ts_rank_cd and calibrated onto the BM25 scale the
	// fusion expects (index/docs/postgres.md, "Keyword side").
	KeywordFullText = "fulltext"
)

// DefaultTextConfig is the text search configuration of the full-text
// side: no stemming and no stop words, so an identifier's parts and every
// word of a question are lexemes as written (Options.TextConfig).
const DefaultTextConfig = "simple"

// textConfigName accepts configuration names that need no quoting; the
// name is also checked against pg_ts_config when the store opens.
var textConfigName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,40}$`)

// ftWeights are ts_rank_cd's weights of the D, C, B and A labels: body
// (D) 0.1, headings (B) and file name (A) three times that, as package
// lexical weighs its fields (DefaultParams).
const ftWeights = "{0.1, 0.1, 0.3, 0.3}"

// ftUnit is ts_rank_cd of one body occurrence of one query lexeme (an OR
// query's covers are single occurrences, each counting its label's
// weight): the evidence at which a chunk scores its held weight, as BM25
// scores a term once in an average-length body at its idf.
const ftUnit = 0.1

// ftColumn is the generated column of configuration cfg: one per
// configuration, so indexes of two configurations can share the table
// (measured side by side) and switching back costs no rewrite.
func ftColumn(cfg string) string { return "tsv_" + cfg }

// fullTextDDL adds the tsvector column of cfg to chunks and its GIN index.
// Both are idempotent and need nothing but the table: an index made
// before the full-text side existed gains them when a writer opens it
// with the option (adding a stored generated column rewrites the table
// once, holding its lock).
func fullTextDDL(q *queries, cfg string) []string {
	col := pgx.Identifier{ftColumn(cfg)}.Sanitize()
	c := "'" + cfg + "'::regconfig"
	return []string{
		// The file name without folder and extension (lexical.NameField)
		// weighs as a name, the headings as headings, the text as body.
		fmt.Sprintf(`ALTER TABLE %s ADD COLUMN IF NOT EXISTS %s tsvector GENERATED ALWAYS AS (
			setweight(to_tsvector(%s, regexp_replace(regexp_replace(path, '^.*/', ''), '(.)\.[^.]*$', '\1')), 'A') ||
			setweight(to_tsvector(%s, headings), 'B') ||
			to_tsvector(%s, text)) STORED`, q.chunks, col, c, c, c),
		fmt.Sprintf("CREATE INDEX IF NOT EXISTS %s ON %s USING gin (%s)",
			pgx.Identifier{"chunks_" + ftColumn(cfg) + "_gin"}.Sanitize(), q.chunks, col),
	}
}

// ftQueries are the full-text statements of one configuration.
type ftQueries struct {
	terms, top, also string
}

func newFTQueries(q *queries, cfg string) ftQueries {
	col := "c." + pgx.Identifier{ftColumn(cfg)}.Sanitize()
	// Rows of this view's commit only, as nearest filters them.
	visible := fmt.Sprintf("c.id < $%%d AND NOT EXISTS (SELECT 1 FROM %s d WHERE d.id = c.id AND d.generation <= $%%d)", q.dead)
	// Each query lexeme alone as a tsquery (quoted: no operator in it
	// counts) with its document frequency in the view.
	terms := fmt.Sprintf(`WITH t AS (
			SELECT lexeme, coalesce(array_length(positions, 1), 1) AS qtf,
				('''' || replace(replace(lexeme, '\', '\\'), '''', '''''') || '''')::tsquery AS tq
			FROM unnest(to_tsvector('%s'::regconfig, $1)))
		SELECT t.lexeme, t.qtf, t.tq::text,
			(SELECT count(*) FROM %s c WHERE %s @@ t.tq AND `+fmt.Sprintf(visible, 2, 3)+`)
		FROM t`, cfg, q.chunks, col)
	// Matching chunks with their ts_rank_cd, the weight (Σ qtf·idf) of
	// the lexemes each holds, how many and which (bits, first 64).
	scored := func(filter string, argFrom int) string {
		return fmt.Sprintf(`WITH t AS (SELECT tq, w, o FROM unnest($1::tsquery[], $2::float8[]) WITH ORDINALITY AS t(tq, w, o)),
			h AS (SELECT c.id, ts_rank_cd('%s', %s, $3::tsquery) AS r, %s AS tsv FROM %s c
				WHERE %s @@ $3::tsquery AND %s%s)
			SELECT h.id, h.r, held.w, held.n, held.bits FROM h CROSS JOIN LATERAL (
				SELECT coalesce(sum(t.w), 0)::float8 AS w, count(*)::float8 AS n,
					coalesce(bit_or(1::bigint << (t.o - 1)::int) FILTER (WHERE t.o <= 64), 0) AS bits
				FROM t WHERE h.tsv @@ t.tq) held`,
			ftWeights, col, col, q.chunks, col, fmt.Sprintf(visible, argFrom, argFrom+1), filter)
	}
	// The calibrated score (ftScore) in SQL, to order by it.
	order := fmt.Sprintf(" ORDER BY CASE WHEN held.n > 0 THEN held.w * 2 * (h.r / held.n) / (h.r / held.n + %g) ELSE 0 END DESC, h.id LIMIT $6", ftUnit)
	return ftQueries{
		terms: terms,
		top:   scored("", 4) + order,
		also:  scored(" AND c.id = ANY($6)", 4),
	}
}

// ftScore is a chunk's keyword score on BM25's scale: the weight of the
// query lexemes it holds (Σ qtf·idf) times 2x/(x + ftUnit), x being its
// ts_rank_cd per held lexeme. One body occurrence of each gives the held
// weight, as BM25 gives a term once at average length; more occurrences,
// or a match in the headings or file name, approach twice it, as BM25's
// saturation approaches K1+1.
func ftScore(r, held, n float64) float64 {
	if n <= 0 {
		return 0
	}
	x := r / n
	return held * 2 * x / (x + ftUnit)
}

// ftQuery is one query's lexemes in one view, on the full-text side. It
// serves index.KeywordQuery with the statistics fusion calibrates with
// (Weights, Coverage) computed as package lexical computes them, from
// document frequencies the GIN index counts.
type ftQuery struct {
	v      *View
	terms  []lexical.Term
	tqs    []string // each term as a tsquery, in the order of terms
	absent float64
	idfMax float64
}

// fullTextQuery looks the lexemes of query up in the view.
func (v *View) fullTextQuery(query string) *ftQuery {
	q := &ftQuery{v: v}
	n := float64(len(v.live))
	q.idfMax = math.Log(1 + (n-0.5)/1.5)
	if n == 0 {
		return q
	}
	rows, _ := v.pool().Query(v.ctx(), v.s.ft.terms, query, v.nextID, v.gen)
	var lex, tq string
	var qtf, df int64
	_, err := pgx.ForEachRow(rows, []any{&lex, &qtf, &tq, &df}, func() error {
		if df == 0 {
			q.absent += float64(qtf)
			return nil
		}
		idf := math.Log(1 + (n-float64(df)+0.5)/(float64(df)+0.5))
		q.terms = append(q.terms, lexical.Term{Text: lex, QTF: float64(qtf), IDF: idf})
		q.tqs = append(q.tqs, tq)
		return nil
	})
	if err != nil {
		v.s.log.Warn("full-text query terms; the keyword side finds nothing for this query", "err", err)
		return &ftQuery{v: v, idfMax: q.idfMax}
	}
	if len(q.terms) > lexical.MaxQueryTerms {
		// The rarest (highest idf) are kept, as package lexical keeps them.
		idx := make([]int, len(q.terms))
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(q.terms[b].IDF, q.terms[a].IDF) })
		idx = idx[:lexical.MaxQueryTerms]
		slices.Sort(idx)
		terms, tqs := q.terms, q.tqs
		q.terms, q.tqs = nil, nil
		for _, i := range idx {
			q.terms, q.tqs = append(q.terms, terms[i]), append(q.tqs, tqs[i])
		}
	}
	return q
}

func (q *ftQuery) TrackTerms() {} // the bits cost nothing more here

func (q *ftQuery) Terms() ([]lexical.Term, float64, float64) { return q.terms, q.absent, q.idfMax }

// Weights are lexical.Query.Weights over the view's document frequencies.
func (q *ftQuery) Weights() (weight, rare float64) {
	for _, t := range q.terms {
		weight += t.QTF * t.IDF
		rare += t.QTF * t.IDF * t.IDF / q.idfMax
	}
	return weight, rare
}

// Coverage is lexical.Query.Coverage over the view's document frequencies.
func (q *ftQuery) Coverage() float64 {
	known, _ := q.Weights()
	if known <= 0 {
		return 0
	}
	return known / (known + q.absent*q.idfMax)
}

// orQuery is the tsquery any of the known lexemes matches: a question's
// words are rarely all in its answer, so AND (plainto_tsquery,
// websearch_to_tsquery) would find nothing for most questions.
func (q *ftQuery) orQuery() string {
	s := ""
	for i, tq := range q.tqs {
		if i > 0 {
			s += " | "
		}
		s += tq
	}
	return s
}

// Search returns up to k chunks by the calibrated score, best first (ties
// by lower id), and the evidence of the chunks in also.
func (q *ftQuery) Search(k int, also []int64) ([]lexical.Result, []lexical.Evidence) {
	ev := make([]lexical.Evidence, len(also))
	if len(q.terms) == 0 {
		return nil, ev
	}
	weight, _ := q.Weights()
	w := make([]float64, len(q.terms))
	for i, t := range q.terms {
		w[i] = t.QTF * t.IDF
	}
	v := q.v
	or := q.orQuery()
	b := &pgx.Batch{}
	if k > 0 {
		b.Queue(v.s.ft.top, q.tqs, w, or, v.nextID, v.gen, k)
	}
	if len(also) > 0 {
		b.Queue(v.s.ft.also, q.tqs, w, or, v.nextID, v.gen, also)
	}
	if b.Len() == 0 {
		return nil, ev
	}
	br := v.pool().SendBatch(v.ctx(), b)
	defer br.Close()
	var top []lexical.Result
	var id int64
	var r, held, n float64
	var bits int64
	scan := []any{&id, &r, &held, &n, &bits}
	if k > 0 {
		rows, _ := br.Query()
		if _, err := pgx.ForEachRow(rows, scan, func() error {
			top = append(top, lexical.Result{ID: id, Score: ftScore(r, held, n), Coverage: min(held/weight, 1), Terms: uint64(bits)})
			return nil
		}); err != nil {
			v.s.log.Warn("full-text search; the keyword side finds nothing for this query", "err", err)
			return nil, ev
		}
	}
	if len(also) > 0 {
		at := make(map[int64]int, len(also))
		for i, a := range also {
			at[a] = i
		}
		rows, _ := br.Query()
		if _, err := pgx.ForEachRow(rows, scan, func() error {
			ev[at[id]] = lexical.Evidence{Score: ftScore(r, held, n), Coverage: min(held/weight, 1), Terms: uint64(bits)}
			return nil
		}); err != nil {
			v.s.log.Warn("full-text evidence of dense hits", "err", err)
		}
	}
	return top, ev
}

// checkTextConfig fails unless the database knows the configuration.
func checkTextConfig(ctx context.Context, db pgxQuerier, cfg string) error {
	if !textConfigName.MatchString(cfg) {
		return fmt.Errorf("postgres: text search configuration %q: lower-case letters, digits and _", cfg)
	}
	var ok bool
	if err := db.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_ts_config WHERE cfgname = $1)", cfg).Scan(&ok); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	if !ok {
		return fmt.Errorf("postgres: the database has no text search configuration %q (SELECT cfgname FROM pg_ts_config lists them)", cfg)
	}
	return nil
}

var _ index.KeywordQuery = (*ftQuery)(nil)

// addFullText adds the full-text column and index in the writer's
// schema-creating transaction, when the option asks for them.
func (s *Store) addFullText(ctx context.Context, tx pgx.Tx) error {
	if s.opts.Keyword != KeywordFullText {
		return nil
	}
	if err := checkTextConfig(ctx, tx, s.opts.TextConfig); err != nil {
		return err
	}
	for _, ddl := range fullTextDDL(&s.q, s.opts.TextConfig) {
		if _, err := tx.Exec(ctx, ddl); err != nil {
			return fmt.Errorf("postgres: add the full-text column: %w", err)
		}
	}
	return nil
}

// checkFullText fails a read-only store asked for full text of an index
// whose chunks have no such column: only a writer adds it.
func (s *Store) checkFullText(ctx context.Context) error {
	if s.opts.Keyword != KeywordFullText || !s.exists(ctx) {
		return nil
	}
	var ok bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_attribute
		WHERE attrelid = to_regclass($1) AND attname = $2 AND NOT attisdropped)`, s.q.chunks, ftColumn(s.opts.TextConfig)).Scan(&ok)
	if err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	if !ok {
		return fmt.Errorf("postgres: the index has no full-text column for %q yet: a writer (a reindex) opened with keyword=%s adds it", s.opts.TextConfig, KeywordFullText)
	}
	return nil
}
