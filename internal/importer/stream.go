package importer

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync/atomic"

	"reportdb/jsonv"
)

// Files are read as streams, so that an import's memory does not depend on
// the size of its files: a 3 GB JSON-lines file (334 MB gzipped) is read
// line by line, each line handed to the workers through a bounded channel
// (back-pressure: the reader waits while the workers and the store are
// busy). The format is found from a peeked prefix of the content:
//
//   - gzip magic: the rest is read through gzip (whatever the name);
//   - a tar header ("ustar" at offset 257): a PuppetDB export archive,
//     streamed entry by entry (readArchive);
//   - a first line that is a complete JSON object: if more follows, JSON
//     lines (one report per line, fleet.py's format), else a one-line report;
//   - anything else (pretty-printed JSON, Puppet's YAML, garbage): one
//     document, read whole (at most maxRecordBytes) and recognised by detect.
//
// Bytes are counted as they are read from the file (the compressed position
// for gzip), which is what progress and its ETA are based on.

// maxRecordBytes bounds what is held in memory for one report: a JSON line,
// a whole one-document file or an archive entry. A report larger than this
// is rejected (the server's own limit, --max-body-bytes, is 64 MiB).
const maxRecordBytes = maxEntryBytes

// countingReader adds the bytes read from a file to the run's byte count.
type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// streamFile reads one (non-directory) file and sends its reports to the
// workers as jobs. It returns when the file has been read (or the context
// is done); problems of the file are counted here.
// It reports whether any job was sent (else nothing of the file is in
// flight).
func (r *run) streamFile(ctx context.Context, path string, next func() int, jobs chan<- job) (sent bool) {
	r.sent = false
	r.readFile(ctx, path, next, jobs)
	return r.sent
}

func (r *run) readFile(ctx context.Context, path string, next func() int, jobs chan<- job) {
	f, err := os.Open(path)
	if err != nil {
		r.fail(next(), path, describeIOError(err))
		r.files.Add(1)
		return
	}
	defer f.Close()
	raw := bufio.NewReaderSize(countingReader{f, &r.bytesRead}, 64<<10)
	in := raw
	if head, _ := raw.Peek(2); bytes.Equal(head, gzipMagic) {
		zr, err := gzip.NewReader(raw)
		if err != nil {
			r.reject(next(), path, "not valid gzip: "+err.Error())
			r.files.Add(1)
			return
		}
		zr.Multistream(true)
		in = bufio.NewReaderSize(zr, 64<<10)
	}
	if head, _ := in.Peek(512); isTarHeader(head) {
		r.readArchive(ctx, path, in, next, jobs)
		r.files.Add(1)
		return
	}
	r.readDocuments(ctx, path, in, next, jobs)
}

// send hands a job to the workers; false when interrupted.
func (r *run) send(ctx context.Context, jobs chan<- job, j job) bool {
	j.pos = r.bytesRead.Load()
	r.sent = true
	select {
	case jobs <- j:
		return true
	case <-ctx.Done():
		return false
	}
}

// readDocuments reads a file that is not an archive: JSON lines streamed
// line by line, anything else as one document.
func (r *run) readDocuments(ctx context.Context, path string, in *bufio.Reader, next func() int, jobs chan<- job) {
	lr := &lineReader{r: in, max: maxRecordBytes}
	first, err := lr.next()
	if err != nil && !errors.Is(err, io.EOF) {
		r.readProblem(next(), path, err)
		r.files.Add(1)
		return
	}
	if errors.Is(err, io.EOF) && first == nil {
		r.reject(next(), path, "empty file")
		r.files.Add(1)
		return
	}
	first = bytes.TrimPrefix(first, []byte("\xef\xbb\xbf")) // a UTF-8 byte order mark
	trimmed := bytes.TrimLeft(first, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '{' {
		if v, perr := jsonv.Parse(first); perr == nil {
			if _, ok := v.(*jsonv.Object); ok {
				if errors.Is(err, io.EOF) || !lr.moreContent() {
					// a one-line report (with or without a final newline)
					if lr.err != nil && !errors.Is(lr.err, io.EOF) {
						r.readProblem(next(), path, lr.err)
						r.files.Add(1)
						return
					}
					r.send(ctx, jobs, job{seq: next(), name: path, data: first, whole: true}) // the worker counts the file
					return
				}
				r.readLines(ctx, path, lr, first, next, jobs)
				r.files.Add(1)
				return
			}
		}
	}
	// One document: the first line (or lines, a BOM, blank lines) and the
	// rest, read whole for detect.
	data := first
	if !errors.Is(err, io.EOF) {
		data = append(data, '\n')
		rest, rerr := readAtMost(in, maxRecordBytes-int64(len(first)))
		if rerr != nil {
			r.readProblem(next(), path, rerr)
			r.files.Add(1)
			return
		}
		data = append(data, rest...)
	}
	r.send(ctx, jobs, job{seq: next(), name: path, data: data, whole: true})
}

// readLines streams JSON lines: each non-blank line is a job named
// file:line.
func (r *run) readLines(ctx context.Context, path string, lr *lineReader, first []byte, next func() int, jobs chan<- job) {
	if !r.send(ctx, jobs, job{seq: next(), name: path + ":1", data: first, line: true}) {
		return
	}
	for {
		line, err := lr.next()
		if errors.Is(err, errLineTooLong) {
			r.reject(next(), path+":"+strconv.Itoa(lr.lineNo), fmt.Sprintf("a line of more than %d bytes", lr.max))
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			r.readProblem(next(), path+":"+strconv.Itoa(lr.lineNo), err)
			return
		}
		if len(bytes.TrimSpace(line)) > 0 {
			if !r.send(ctx, jobs, job{seq: next(), name: path + ":" + strconv.Itoa(lr.lineNo), data: line, line: true}) {
				return
			}
		}
		if err != nil {
			return // io.EOF
		}
	}
}

// readProblem records an error met while reading: corrupt gzip (or a
// record too large) rejects, other I/O errors fail.
func (r *run) readProblem(seq int, name string, err error) {
	var ce flate.CorruptInputError
	switch {
	case errors.Is(err, errLineTooLong):
		r.reject(seq, name, fmt.Sprintf("larger than the %d bytes an import reads as one report", maxRecordBytes))
	case errors.As(err, &ce), errors.Is(err, gzip.ErrChecksum), errors.Is(err, gzip.ErrHeader), errors.Is(err, io.ErrUnexpectedEOF):
		r.reject(seq, name, "not valid gzip: "+err.Error())
	default:
		r.fail(seq, name, describeIOError(err))
	}
}

var errLineTooLong = errors.New("line too long")

// lineReader reads lines of at most max bytes (without the newline); a
// longer line is skipped to its end and reported as errLineTooLong.
type lineReader struct {
	r      *bufio.Reader
	max    int64
	lineNo int   // number of the line last returned (1-based)
	err    error // sticky error after the last line
}

// next returns the next line with its newline removed (a copy). At the end
// it returns the last (unterminated) line, possibly nil, with io.EOF.
func (l *lineReader) next() ([]byte, error) {
	if l.err != nil {
		return nil, l.err
	}
	l.lineNo++
	var line []byte
	tooLong := false
	for {
		chunk, err := l.r.ReadSlice('\n')
		if !tooLong {
			if int64(len(line)+len(chunk)) > l.max+1 {
				tooLong = true
				line = nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			l.err = err
			if tooLong {
				return nil, errLineTooLong
			}
			if len(line) == 0 {
				line = nil
			}
			return line, err
		}
		if tooLong {
			return nil, errLineTooLong
		}
		return bytes.TrimSuffix(line[:len(line)-1], []byte("\r")), nil
	}
}

// moreContent reports whether anything but whitespace follows; it consumes
// blank lines (counting them) but nothing else.
func (l *lineReader) moreContent() bool {
	for {
		b, err := l.r.Peek(1)
		if err != nil {
			if !errors.Is(err, io.EOF) {
				l.err = err
			}
			return false
		}
		switch b[0] {
		case ' ', '\t', '\r':
			l.r.ReadByte()
		case '\n':
			l.r.ReadByte()
			l.lineNo++
		default:
			return true
		}
	}
}

// readAtMost reads the rest of r, failing with errLineTooLong beyond max
// bytes.
func readAtMost(r io.Reader, max int64) ([]byte, error) {
	var buf bytes.Buffer
	n, err := buf.ReadFrom(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if n > max {
		return nil, errLineTooLong
	}
	return buf.Bytes(), nil
}
