package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"reportdb"
	"reportdb/internal/benchfleet"
	"reportdb/jsonv"
	"reportdb/spool"
	"reportdb/sqlite"
	"reportdb/store"
	"reportdb/wire"
)

// flaky is a real SQLite store that can be switched "down": every
// statement then fails as an unreachable database's would.
type flaky struct {
	*sqlite.DB
	down   atomic.Bool
	refuse string       // hash of a report refused while up
	drop   atomic.Int32 // statements to fail as on a connection a restart closed, while up
	pings  atomic.Int32 // health checks asked

	mu     sync.Mutex
	stored []string // hashes in the order they were written
}

var errDown = errors.New("dial tcp 127.0.0.1:5432: connect: connection refused")

func (f *flaky) StoreReports(ctx context.Context, rs []*reportdb.Report) ([]reportdb.Outcome, []error, error) {
	if f.down.Load() {
		return nil, nil, errDown
	}
	if f.drop.Add(-1) >= 0 {
		return nil, nil, errors.New("FATAL: terminating connection due to administrator command (SQLSTATE 57P01)")
	}
	errs := make([]error, len(rs))
	outs := make([]reportdb.Outcome, len(rs))
	var ok []*reportdb.Report
	var idx []int
	for i, r := range rs {
		if r.Hash == f.refuse {
			errs[i] = &reportdb.Error{Code: reportdb.EINTERNAL, Message: "storing the report failed", Err: errors.New("value too long")}
			continue
		}
		ok, idx = append(ok, r), append(idx, i)
	}
	o, e, err := f.DB.StoreReports(ctx, ok)
	if err != nil {
		return nil, nil, err
	}
	f.mu.Lock()
	for j, i := range idx {
		outs[i], errs[i] = o[j], e[j]
		if e[j] == nil && o[j] == reportdb.Stored {
			f.stored = append(f.stored, ok[j].Hash)
		}
	}
	f.mu.Unlock()
	return outs, errs, nil
}

// checkStored fails t unless the hashes written are want, in order (the
// delivery order is the arrival order).
func (f *flaky) checkStored(t *testing.T, want []string) {
	t.Helper()
	f.mu.Lock()
	got := f.stored
	f.mu.Unlock()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("delivery order differs from arrival order:\n got %v\nwant %v", got, want)
	}
}

func (f *flaky) Query(ctx context.Context, st store.Statement) (store.Rows, error) {
	if f.down.Load() {
		return nil, errDown
	}
	return f.DB.Query(ctx, st)
}

func (f *flaky) Ping(ctx context.Context) error {
	f.pings.Add(1)
	if f.down.Load() {
		return errDown
	}
	return f.DB.Ping(ctx)
}

func testReports(t *testing.T, n int) []*reportdb.Report {
	t.Helper()
	var out []*reportdb.Report
	for _, b := range benchfleet.Wire8(t, 1+n/149) {
		v, err := jsonv.Parse(b.Body)
		if err != nil {
			t.Fatal(err)
		}
		r, err := wire.Decode(8, v, time.Now().UnixMilli())
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
		if len(out) == n {
			break
		}
	}
	return out
}

func countReports(t *testing.T, b store.Backend) int64 {
	t.Helper()
	rows, err := b.Query(context.Background(), store.Statement{SQL: "SELECT count(*) FROM reports"})
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var n any
	rows.Next()
	if err := rows.Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n.(int64)
}

func openFlaky(t *testing.T) *flaky {
	db, err := sqlite.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &flaky{DB: db}
}

// spoolFirst opens a spool in dir (bounded by maxBytes, 0: none) and a
// committer over b, with at most maxBatch reports a batch, that
// acknowledges from it (AcknowledgeFromSpool); both close when the test
// ends, the committer first.
func spoolFirst(t *testing.T, b store.Backend, maxBatch int, dir string, maxBytes int64) *Committer {
	t.Helper()
	sp, err := spool.Open(dir, maxBytes)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sp.Close() })
	c := NewCommitter(b, maxBatch)
	t.Cleanup(c.Close)
	c.UseSpool(sp, nil)
	c.AcknowledgeFromSpool()
	return c
}

func waitDrained(t *testing.T, c *Committer) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, _, _ := c.SpoolStats()
		if st.Records == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("spool not drained: %+v", st)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestSpoolWhileDatabaseDown(t *testing.T) {
	f := openFlaky(t)
	reports := testReports(t, 40)
	sp, err := spool.Open(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	c := NewCommitter(f, 8)
	var observed []string // OnStored, as the fleet metrics use it
	var observedMu sync.Mutex
	c.OnStored = func(r *reportdb.Report) {
		observedMu.Lock()
		observed = append(observed, r.Hash)
		observedMu.Unlock()
	}
	c.UseSpool(sp, nil)
	defer c.Close()

	// up: stored directly
	if o, err := c.Submit(context.Background(), reports[0]); err != nil || o != reportdb.Stored {
		t.Fatalf("up: %v %v", o, err)
	}
	f.down.Store(true)
	// the first report's failure asks the database's health once (each
	// check may wait 5 s for a host that does not answer); the reports
	// after it go to the spool behind it without asking
	f.pings.Store(0)
	for _, r := range reports[1:30] {
		o, err := c.Submit(context.Background(), r)
		if err != nil || o != reportdb.Queued {
			t.Fatalf("down: %v %v", o, err)
		}
	}
	if n := f.pings.Load(); n != 1 {
		t.Fatalf("%d health checks while spooling 29 reports, want 1", n)
	}
	st, _, _ := c.SpoolStats()
	if st.Records != 29 || st.Bytes == 0 || st.Oldest.IsZero() {
		t.Fatalf("spool stats while down: %+v", st)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	if c.AwaitQueued(ctx, reports[1].Hash) {
		t.Fatal("AwaitQueued returned true while the database is down")
	}
	cancel()
	if n := countReports(t, f.DB); n != 1 {
		t.Fatalf("%d reports stored while down", n)
	}
	f.down.Store(false)
	// while the spool drains, new reports queue behind it (arrival order)
	for _, r := range reports[30:] {
		if _, err := c.Submit(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if !c.AwaitQueued(ctx, reports[29].Hash) {
		t.Fatal("not delivered")
	}
	waitDrained(t, c)
	if n := countReports(t, f.DB); n != 40 {
		t.Fatalf("%d reports stored, want 40", n)
	}
	var want []string
	for _, r := range reports {
		want = append(want, r.Hash)
	}
	f.checkStored(t, want)
	// every stored report is observed, spooled ones too
	observedMu.Lock()
	if !reflect.DeepEqual(observed, want) {
		t.Errorf("OnStored saw %d reports, want the 40 stored, in order", len(observed))
	}
	observedMu.Unlock()
	// a re-send is a duplicate
	if o, err := c.Submit(context.Background(), reports[5]); err != nil || o != reportdb.Duplicate {
		t.Fatalf("re-send: %v %v", o, err)
	}
}

// A crash after the database committed spooled reports but before the
// spool recorded it delivers them again on restart: duplicates, never a
// second copy and never a loss.
func TestSpoolRedeliveryAfterCrashIsDuplicate(t *testing.T) {
	f := openFlaky(t)
	reports := testReports(t, 10)
	dir := t.TempDir()
	sp, _ := spool.Open(dir, 0)
	c := NewCommitter(f, 8)
	c.UseSpool(sp, nil)
	f.down.Store(true)
	for _, r := range reports {
		c.Submit(context.Background(), r)
	}
	c.Close()
	sp.Close()
	// "the database committed them" (the crash came before spool.Commit)
	f.down.Store(false)
	if _, _, err := f.DB.StoreReports(context.Background(), reports[:6]); err != nil {
		t.Fatal(err)
	}
	sp, _ = spool.Open(dir, 0)
	defer sp.Close()
	if sp.Len() != 10 {
		t.Fatalf("spool has %d after restart", sp.Len())
	}
	c = NewCommitter(f, 8)
	c.UseSpool(sp, nil)
	defer c.Close()
	waitDrained(t, c)
	if n := countReports(t, f.DB); n != 10 {
		t.Fatalf("%d reports stored, want 10", n)
	}
}

func TestSpoolFull(t *testing.T) {
	f := openFlaky(t)
	reports := testReports(t, 3)
	sp, _ := spool.Open(t.TempDir(), 100) // smaller than one report
	defer sp.Close()
	c := NewCommitter(f, 8)
	c.UseSpool(sp, nil)
	defer c.Close()
	f.down.Store(true)
	_, err := c.Submit(context.Background(), reports[0])
	var e *reportdb.Error
	if !errors.As(err, &e) || e.Code != reportdb.EUNAVAILABLE || e.RetryAfter <= 0 || !strings.Contains(e.Message, "database is unavailable") {
		t.Fatalf("spool full: %#v", err)
	}
	if sp.Len() != 0 {
		t.Fatal("a refused report was spooled")
	}
}

// With acknowledge spool and the database up, a full spool says the
// database falls behind, not that it is unavailable.
func TestSpoolFullWhileDatabaseUp(t *testing.T) {
	g := &gated{flaky: openFlaky(t), gate: make(chan struct{})}
	reports := testReports(t, 40)
	c := spoolFirst(t, g, 8, t.TempDir(), 8<<10)
	defer close(g.gate) // before the committer closes
	var err error
	for _, r := range reports {
		if _, err = c.Submit(context.Background(), r); err != nil {
			break
		}
	}
	var e *reportdb.Error
	if !errors.As(err, &e) || e.Code != reportdb.EUNAVAILABLE || e.RetryAfter <= 0 || !strings.Contains(e.Message, "faster than the database takes them") {
		t.Fatalf("spool full with the database up: %#v", err)
	}
}

// DeliverSpool keeps waiting while the database refuses the oldest
// report (it is up): the report is discarded after its attempts and the
// rest delivered.
func TestDeliverSpoolPastARefusedReport(t *testing.T) {
	f := openFlaky(t)
	reports := testReports(t, 3)
	f.refuse = reports[0].Hash
	c := spoolFirst(t, f, 8, t.TempDir(), 0)
	for _, r := range reports {
		if _, err := c.Submit(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if left := c.DeliverSpool(ctx); left != 0 {
		t.Fatalf("%d left", left)
	}
	if c.SpoolDiscarded() != 1 || countReports(t, f.DB) != 2 {
		t.Fatalf("%d discarded, %d stored; want 1 and 2", c.SpoolDiscarded(), countReports(t, f.DB))
	}
}

// A report the database refuses while it is up is not spooled: the client
// gets the error, as without a spool.
func TestRefusedReportNotSpooled(t *testing.T) {
	f := openFlaky(t)
	reports := testReports(t, 2)
	f.refuse = reports[0].Hash
	sp, _ := spool.Open(t.TempDir(), 0)
	defer sp.Close()
	c := NewCommitter(f, 8)
	c.UseSpool(sp, nil)
	defer c.Close()
	if _, err := c.Submit(context.Background(), reports[0]); err == nil || sp.Len() != 0 {
		t.Fatalf("refused report: err %v, spool %d", err, sp.Len())
	}
}

// A submission that fails on a connection the database's restart closed,
// while the database answers again, is tried once more and stored
// directly: it is neither refused (a 500 for a report nothing is wrong
// with) nor spooled.
func TestSubmitRetriesOnceWhenTheDatabaseIsBack(t *testing.T) {
	f := openFlaky(t)
	reports := testReports(t, 2)
	sp, _ := spool.Open(t.TempDir(), 0)
	defer sp.Close()
	c := NewCommitter(f, 8)
	c.UseSpool(sp, nil)
	defer c.Close()
	f.drop.Store(1)
	if o, err := c.Submit(context.Background(), reports[0]); err != nil || o != reportdb.Stored || sp.Len() != 0 {
		t.Fatalf("after one dropped connection: outcome %v, err %v, spool %d; want stored directly", o, err, sp.Len())
	}
	// failing twice while the database answers: the report is blamed
	f.drop.Store(2)
	if _, err := c.Submit(context.Background(), reports[1]); err == nil || sp.Len() != 0 {
		t.Fatalf("failing twice with the database up: err %v, spool %d; want an error and nothing spooled", err, sp.Len())
	}
	if n := countReports(t, f); n != 1 {
		t.Fatalf("%d reports stored, want 1", n)
	}
}

// A spooled report the database refuses once it is back is retried, then
// moved to the discard directory; the reports behind it are delivered and
// observed (OnStored, the fleet metrics).
func TestSpoolDiscardsAfterRetries(t *testing.T) {
	f := openFlaky(t)
	reports := testReports(t, 3)
	f.refuse = reports[1].Hash
	dir := t.TempDir()
	sp, _ := spool.Open(dir, 0)
	defer sp.Close()
	c := NewCommitter(f, 8)
	var observed atomic.Int32
	c.OnStored = func(*reportdb.Report) { observed.Add(1) }
	c.UseSpool(sp, nil)
	defer c.Close()
	f.down.Store(true)
	for _, r := range reports {
		if o, err := c.Submit(context.Background(), r); o != reportdb.Queued || err != nil {
			t.Fatal(o, err)
		}
	}
	f.down.Store(false)
	waitDrained(t, c)
	if n := countReports(t, f.DB); n != 2 || c.SpoolDiscarded() != 1 {
		t.Fatalf("stored %d, discarded %d", n, c.SpoolDiscarded())
	}
	// the report behind the refused one was stored in the same batch:
	// observed then, not lost when it comes back as a duplicate
	if n := observed.Load(); n != 2 {
		t.Fatalf("OnStored saw %d reports, want the 2 stored", n)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "discard", "*.json"))
	if len(files) != 1 {
		t.Fatalf("discard files: %v", files)
	}
	b, _ := os.ReadFile(files[0])
	if !reflect.DeepEqual(len(b) > 0, true) {
		t.Fatal("empty discard file")
	}
}

// A spooled report comes back exactly as it went in.
func TestSpoolRoundTrip(t *testing.T) {
	f := openFlaky(t)
	reports := testReports(t, 149)
	dir := t.TempDir()
	sp, _ := spool.Open(dir, 0)
	c := NewCommitter(f, 8)
	c.UseSpool(sp, nil)
	f.down.Store(true)
	for _, r := range reports {
		c.Submit(context.Background(), r)
	}
	c.Close()
	recs, err := sp.Peek(1000)
	if err != nil || len(recs) != len(reports) {
		t.Fatal(len(recs), err)
	}
	for i, rec := range recs {
		r, err := decodeRecord(rec.Payload)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(r, reports[i]) {
			t.Fatalf("report %d changed through the spool:\n%+v\n%+v", i, r, reports[i])
		}
	}
	sp.Close()
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// gated is a flaky store whose writes wait until the gate opens, counting
// the batches it is handed.
type gated struct {
	*flaky
	gate    chan struct{}
	batches atomic.Int32
}

func (g *gated) StoreReports(ctx context.Context, rs []*reportdb.Report) ([]reportdb.Outcome, []error, error) {
	<-g.gate
	g.batches.Add(1)
	return g.flaky.StoreReports(ctx, rs)
}

// TestAcknowledgeFromSpool: with AcknowledgeFromSpool every submission is
// answered Queued once spooled, while the database is up and before it
// has written anything (its writes are held back here), without asking
// its health; the spool is then delivered in arrival order, in batches
// of up to maxBatch rather than one per submission; a re-send is queued
// and stored as a duplicate, not a second copy; a report the database
// refuses is answered and then discarded after its retries, the others
// delivered; and after Close a submission is refused, not spooled.
func TestAcknowledgeFromSpool(t *testing.T) {
	g := &gated{flaky: openFlaky(t), gate: make(chan struct{})}
	reports := testReports(t, 40)
	g.refuse = reports[7].Hash
	c := spoolFirst(t, g, 16, t.TempDir(), 0)
	var stored atomic.Int32
	c.OnStored = func(*reportdb.Report) { stored.Add(1) }
	answered := make(chan error, 1)
	go func() {
		for _, r := range append(reports, reports[3]) { // the last a re-send
			if o, err := c.Submit(context.Background(), r); err != nil || o != reportdb.Queued {
				answered <- fmt.Errorf("submission with the database up: %v %v, want queued", o, err)
				return
			}
		}
		answered <- nil
	}()
	select {
	case err := <-answered:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		close(g.gate) // let the committer finish
		t.Fatal("submissions wait for the database's writes")
	}
	if n := g.pings.Load(); n != 0 {
		t.Fatalf("%d health checks, want none", n)
	}
	if n := countReports(t, g.DB); n != 0 {
		t.Fatalf("%d reports stored before any write was let through", n)
	}
	if st, _, _ := c.SpoolStats(); st.Records < 40 {
		t.Fatalf("spool holds %d records, want the 41 answered (one may be in a held-back batch)", st.Records)
	}
	close(g.gate)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if !c.AwaitQueued(ctx, reports[39].Hash) {
		t.Fatal("not delivered")
	}
	waitDrained(t, c)
	if n := countReports(t, g.DB); n != 39 {
		t.Fatalf("%d reports stored, want 39 (40 less the refused one)", n)
	}
	if c.SpoolDiscarded() != 1 {
		t.Fatalf("%d discarded, want the refused one", c.SpoolDiscarded())
	}
	if n := stored.Load(); n != 39 {
		t.Fatalf("OnStored saw %d reports, want 39", n)
	}
	var want []string
	for _, r := range reports {
		if r.Hash != g.refuse {
			want = append(want, r.Hash)
		}
	}
	g.checkStored(t, want)
	// 41 records in batches of at most 16, with the refused one retried:
	// far fewer batches than records (one per record would be 41 or more)
	if n := g.batches.Load(); n > 12 {
		t.Fatalf("%d batches for 41 spooled records with max-batch 16", n)
	}
	c.Close()
	if _, err := c.Submit(context.Background(), reports[0]); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v, want ErrClosed", err)
	}
}

// The delivery loop leaves a delivered log in place while reports keep
// coming and truncates it once the spool has been empty for
// SpoolTidyAfter.
func TestSpoolLogEmptiedWhenIdle(t *testing.T) {
	old := SpoolTidyAfter
	SpoolTidyAfter = 300 * time.Millisecond
	t.Cleanup(func() { SpoolTidyAfter = old }) // after the committer's delivery loop stops
	f := openFlaky(t)
	dir := t.TempDir()
	c := spoolFirst(t, f, 16, dir, 0)
	reports := testReports(t, 5)
	logSize := func() int64 {
		fi, err := os.Stat(filepath.Join(dir, "spool.log"))
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	for round := 0; round < 2; round++ {
		for _, r := range reports {
			if _, err := c.Submit(context.Background(), r); err != nil {
				t.Fatal(err)
			}
		}
		waitDrained(t, c)
		if n := logSize(); n == 0 {
			t.Fatalf("round %d: the log was emptied right after its delivery", round)
		}
		deadline := time.Now().Add(10 * time.Second)
		for logSize() != 0 {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: the delivered log still holds %d bytes after %v idle", round, logSize(), SpoolTidyAfter)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if n := countReports(t, f.DB); n != 5 {
		t.Fatalf("%d reports stored, want 5", n)
	}
}

// DeliverSpool waits for the spool's delivery while the database takes
// reports, gives up at once when it does not, and stops waiting when its
// context ends.
func TestDeliverSpool(t *testing.T) {
	g := &gated{flaky: openFlaky(t), gate: make(chan struct{})}
	c := spoolFirst(t, g, 4, t.TempDir(), 0)
	reports := testReports(t, 10)
	for _, r := range reports[:6] {
		if _, err := c.Submit(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	// a delivery is held: waiting ends with the context
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	if left := c.DeliverSpool(ctx); left != 6 {
		t.Fatalf("with the delivery held: %d left, want 6", left)
	}
	cancel()
	close(g.gate)
	if left := c.DeliverSpool(context.Background()); left != 0 {
		t.Fatalf("with the database up: %d left", left)
	}
	if n := countReports(t, g.DB); n != 6 {
		t.Fatalf("%d stored, want 6", n)
	}
	// the database goes away: the spool keeps the rest for the next start
	g.down.Store(true)
	for _, r := range reports[6:] {
		if _, err := c.Submit(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan int, 1)
	go func() { done <- c.DeliverSpool(context.Background()) }()
	select {
	case left := <-done:
		if left != 4 {
			t.Fatalf("with the database down: %d left, want 4", left)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("DeliverSpool waits for a database that is down")
	}
}
