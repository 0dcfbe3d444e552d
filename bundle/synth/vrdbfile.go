package synth

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// VRDBCounts is what WriteVRDB wrote.
type VRDBCounts struct {
	Bytes   int64
	Rows    int
	Recalls int
}

// WriteVRDB writes a Transport Canada vehicle recall file of size bytes or
// a little more, for measuring what a refresh of a file that large takes:
// Transport Canada's monthly full file is about 207 MB, a node's
// synthetic corpus a quarter of that. The file is in the daily extract's
// layout (its 17 columns, quoted as the agency quotes them) and stops at
// the end of the row that reaches size.
//
// With rows nil its recalls are drawn as the corpus's are (cfg's seed and
// reference date; the scale is not used). Otherwise rows is a vehicle file
// of the agency's (a daily extract), whose rows are written again and again,
// byte for byte, with each copy's recall numbers renumbered so that every
// recall stays a recall of its own: its size, its rows per recall and its
// comments are the agency's.
func WriteVRDB(w io.Writer, cfg Config, size int64, rows []byte) (VRDBCounts, error) {
	g, err := newGenerator(cfg)
	if err != nil {
		return VRDBCounts{}, err
	}
	cw := &countingWriter{w: bufio.NewWriterSize(w, 1<<20)}
	n := &vrdbNumbers{last: g.ref.year()}
	if rows == nil {
		err = g.writeDrawnVRDB(cw, size, n)
	} else {
		err = writeCopiedVRDB(cw, size, rows, n)
	}
	if err == nil {
		err = cw.w.Flush()
	}
	return VRDBCounts{Bytes: cw.n, Rows: cw.rows, Recalls: n.count}, err
}

// countingWriter counts the bytes and rows written through it.
type countingWriter struct {
	w    *bufio.Writer
	n    int64
	rows int
}

func (c *countingWriter) write(b []byte, rows int) {
	c.w.Write(b) // errors stick in the bufio.Writer and surface at Flush
	c.n += int64(len(b))
	c.rows += rows
}

// vrdbNumbers hands out distinct recall numbers in the agency's form,
// YYYYNNN, spread over the years before last (the newest first) rather
// than piled in one: from 1995, when the corpus's makes and models all
// have model years, a thousand recalls a year before the numbers widen.
type vrdbNumbers struct {
	last, count int
}

// firstVRDBYear is the oldest year a drawn recall number carries.
const firstVRDBYear = 1995

func (n *vrdbNumbers) next() (number string, year int) {
	span := n.last - firstVRDBYear + 1
	year = n.last - n.count%span
	serial := n.count/span + 1
	n.count++
	return fmt.Sprintf("%d%03d", year, serial), year
}

// writeDrawnVRDB writes drawn recalls until size bytes are written.
func (g *generator) writeDrawnVRDB(cw *countingWriter, size int64, n *vrdbNumbers) error {
	cw.write([]byte(vrdbHeader), 0)
	for cw.n < size {
		k := n.count
		rn, y := n.next()
		e := entry{key: mix(uint64(k) ^ 0x7672_6462), typ: typeVehicle, recallNumber: rn}
		// A day of its year, no later than the reference date.
		r := newRand(g.seed, e.key)
		e.day = min(dayOf(time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC))+day(r.IntN(365)), g.ref)
		o := g.vehicle(&e)
		cw.write(o.csv, o.csvRows)
	}
	return nil
}

// writeCopiedVRDB writes copies of rows' rows, renumbered, until size
// bytes are written.
func writeCopiedVRDB(cw *countingWriter, size int64, rows []byte, n *vrdbNumbers) error {
	body := rows
	if bytes.HasPrefix(body, []byte("\xEF\xBB\xBF")) {
		body = body[3:]
	}
	cr := csv.NewReader(bytes.NewReader(body))
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err != nil {
		return fmt.Errorf("reading the vehicle file's header: %w", err)
	}
	if len(header) == 0 || strings.TrimSpace(header[0]) != "RECALL_NUMBER_NUM" {
		return errors.New("the vehicle file's first column is not RECALL_NUMBER_NUM, which the agency's files start with")
	}
	headerEnd := cr.InputOffset()
	type row struct {
		raw    []byte // the row as written, the recall number cut out
		quoted bool
		number string
	}
	var all []row
	start := headerEnd
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("reading the vehicle file: %w", err)
		}
		end := cr.InputOffset()
		raw := body[start:end]
		start = end
		q := bytes.HasPrefix(raw, []byte(`"`+rec[0]+`"`))
		cut := len(rec[0])
		switch {
		case q:
			cut += 2
		case !bytes.HasPrefix(raw, []byte(rec[0])):
			return fmt.Errorf("reading the vehicle file: the recall number %q of a row is not written plainly", rec[0])
		}
		all = append(all, row{raw: raw[cut:], quoted: q, number: rec[0]})
	}
	if len(all) == 0 {
		return errors.New("the vehicle file has no rows to copy")
	}
	cw.write(body[:headerEnd], 0)
	var b []byte
	for cw.n < size {
		numbers := map[string]string{}
		for _, r := range all {
			if cw.n >= size {
				break
			}
			rn, ok := numbers[r.number]
			if !ok {
				rn, _ = n.next()
				numbers[r.number] = rn
			}
			b = b[:0]
			if r.quoted {
				b = appendCSVField(b, rn)
			} else {
				b = append(b, rn...)
			}
			cw.write(append(b, r.raw...), 1)
		}
	}
	return nil
}
