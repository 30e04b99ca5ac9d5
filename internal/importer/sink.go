package importer

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"reportdb"
	"reportdb/ingest"
	"reportdb/jsonv"
)

// CommitterSink stores reports through the group-commit ingest path, as
// the HTTP command endpoint does.
type CommitterSink struct{ Committer *ingest.Committer }

// Store implements Sink.
func (s CommitterSink) Store(ctx context.Context, it *Item) (reportdb.Outcome, error) {
	it.Payload = nil // decoded already: not kept while the batch commits
	out, err := s.Committer.Submit(ctx, it.Report)
	if err != nil && reportdb.ErrorCode(err) == reportdb.EINVALID {
		return 0, &Rejection{Reason: reportdb.ErrorMessage(err)}
	}
	return out, err
}

// DryRunSink stores nothing: every valid report counts as stored.
type DryRunSink struct{}

// Store implements Sink.
func (DryRunSink) Store(context.Context, *Item) (reportdb.Outcome, error) {
	return reportdb.Stored, nil
}

// HTTPSink submits reports to a running reportdb or PuppetDB as "store
// report" commands: POST /pdb/cmd/v1?command=store_report&version=N&certname=C
// with the payload as gzipped JSON, in the version it was found in
// (Puppet's reports are converted to version 8).
//
// A 4xx answer (except 408 and 429) rejects the report with the server's
// message; other answers and network errors are retried Retries times,
// RetryDelay, 2*RetryDelay, 4*RetryDelay ... apart, then fail. The server
// does not say whether a report was a duplicate: every 2xx is "stored".
type HTTPSink struct {
	// URL is the server's base URL (http://host:8080); a URL that already
	// ends in /pdb/cmd/v1 is used as is.
	URL        string
	Client     *http.Client
	Retries    int
	RetryDelay time.Duration
}

// CommandURL returns the command endpoint of a server base URL.
func CommandURL(base string) string {
	base = strings.TrimRight(base, "/")
	if strings.HasSuffix(base, "/pdb/cmd/v1") {
		return base
	}
	return base + "/pdb/cmd/v1"
}

// Store implements Sink.
func (s *HTTPSink) Store(ctx context.Context, it *Item) (reportdb.Outcome, error) {
	raw := jsonv.AppendCompact(make([]byte, 0, 64<<10), it.Payload)
	var body bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&body, gzip.BestSpeed)
	zw.Write(raw)
	zw.Close()
	q := url.Values{"command": {"store_report"}, "version": {strconv.Itoa(it.Version)}, "certname": {it.Report.Certname}}
	target := CommandURL(s.URL) + "?" + q.Encode()
	client := s.Client
	if client == nil {
		client = http.DefaultClient
	}
	var lastErr error
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body.Bytes()))
		if err != nil {
			return 0, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Content-Encoding", "gzip")
		req.Header.Set("X-Uncompressed-Length", strconv.Itoa(len(raw)))
		// a reportdb server counts these under the "import" channel
		req.Header.Set("X-Reportdb-Channel", "import")
		resp, err := client.Do(req)
		if err == nil {
			msg, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
			switch code := resp.StatusCode; {
			case code >= 200 && code < 300:
				return reportdb.Stored, nil
			case code >= 400 && code < 500 && code != http.StatusRequestTimeout && code != http.StatusTooManyRequests:
				return 0, &Rejection{Reason: fmt.Sprintf("rejected by the server (%d): %s", code, serverMessage(msg))}
			default:
				lastErr = fmt.Errorf("the server answered %d: %s", code, serverMessage(msg))
			}
		} else {
			lastErr = err
		}
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		if attempt >= s.Retries {
			if attempt > 0 {
				return 0, fmt.Errorf("%v (after %d attempts)", lastErr, attempt+1)
			}
			return 0, lastErr
		}
		select {
		case <-time.After(s.RetryDelay << attempt):
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
}

// serverMessage extracts the message of an error body: PuppetDB's
// {"error": "..."} or plain text.
func serverMessage(body []byte) string {
	if v, err := jsonv.Parse(body); err == nil {
		if o, ok := v.(*jsonv.Object); ok {
			if e, ok := o.Get("error"); ok {
				if s, ok := e.(string); ok {
					return s
				}
			}
		}
	}
	s := strings.TrimSpace(string(body))
	if s == "" {
		return "(no message)"
	}
	if len(s) > 500 {
		s = s[:500] + "..."
	}
	return s
}
