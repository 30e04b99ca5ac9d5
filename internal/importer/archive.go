package importer

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"path"
	"strconv"
	"strings"

	"reportdb/jsonv"
)

// PuppetDB export archives (PuppetDB 7: puppetlabs.puppetdb.export, written
// by `puppet db export` and GET /pdb/admin/v1/archive) are gzipped tarballs
// laid out as
//
//	puppetdb-bak/export-metadata.json   {"timestamp": ..., "command_versions":
//	                                      {"replace_catalog": 9, "store_report": 8,
//	                                       "replace_facts": 5, "configure_expiration": 1,
//	                                       "replace_catalog_inputs": 1}}
//	puppetdb-bak/reports/<certname>-<sha1 of producer_timestamp>.json
//	puppetdb-bak/catalogs/<certname>-<sha1>.json
//	puppetdb-bak/facts/<certname>.json
//	puppetdb-bak/catalog_inputs/<certname>-<sha1>.json
//	puppetdb-bak/configure_expiration/<certname>-<sha1>.json
//
// the metadata entry first. Each reports/ entry is one "store report"
// payload (pretty-printed JSON) of the version command_versions.store_report
// names: 8 for PuppetDB 5 and later (reports-query->wire-v8), 5 for the
// exports of PuppetDB 3/4. PuppetDB's import submits each entry as that
// command; so does this one. Entries of the other kinds are skipped and
// counted by kind (their directory name).

// skippedKinds are the non-report entry kinds PuppetDB exports.
var skippedKinds = map[string]bool{
	"catalogs": true, "facts": true, "catalog_inputs": true, "configure_expiration": true,
}

const metadataName = "export-metadata.json"

// maxEntryBytes bounds one archive entry read into memory.
const maxEntryBytes = 1 << 30

// readArchive streams an export archive: report entries become jobs for
// the workers, everything else is counted.
// in is the archive's content (gunzipped by streamFile).
func (r *run) readArchive(ctx context.Context, file string, in io.Reader, next func() int, jobs chan<- job) {
	tr := tar.NewReader(in)
	version := 0 // unknown until the metadata says
	var versionErr error
	entries := 0
	for {
		if ctx.Err() != nil {
			return
		}
		hdr, err := tr.Next()
		if err == io.EOF {
			if entries == 0 {
				r.reject(next(), file, "an empty archive")
			}
			return
		}
		if err != nil {
			r.reject(next(), file, "corrupt archive after "+strconv.Itoa(entries)+" entries: "+err.Error())
			return
		}
		entries++
		if hdr.Typeflag != tar.TypeReg {
			continue // directories, links
		}
		name := path.Clean(strings.TrimPrefix(hdr.Name, "./"))
		display := file + ":" + hdr.Name
		base := path.Base(name)
		kind := path.Base(path.Dir(name))
		switch {
		case base == metadataName:
			data, err := readEntry(tr, hdr)
			if err != nil {
				r.reject(next(), display, err.Error())
				continue
			}
			// An unusable version rejects the archive's reports (below).
			version, versionErr = exportVersion(data)
		case kind == "reports" && strings.HasSuffix(base, ".json"):
			data, err := readEntry(tr, hdr)
			seq := next()
			r.filesTotal.Add(1)
			if err == nil && versionErr != nil {
				err = versionErr
			}
			if err != nil {
				r.reject(seq, display, err.Error())
				r.files.Add(1)
				continue
			}
			if !r.send(ctx, jobs, job{seq: seq, name: display, data: data, version: version}) {
				return
			}
		case skippedKinds[kind]:
			r.skip(kind)
		default:
			r.skip("other")
		}
	}
}

func readEntry(tr *tar.Reader, hdr *tar.Header) ([]byte, error) {
	if hdr.Size > maxEntryBytes {
		return nil, reject("entry of %d bytes is larger than the %d bytes an import reads", hdr.Size, maxEntryBytes)
	}
	buf := bytes.NewBuffer(make([]byte, 0, hdr.Size))
	if _, err := buf.ReadFrom(tr); err != nil {
		return nil, reject("corrupt archive: %v", err)
	}
	return buf.Bytes(), nil
}

// exportVersion reads the "store report" version from export-metadata.json.
// An archive without it (or whose metadata omits the version) has its
// payloads' versions guessed from their keys.
func exportVersion(data []byte) (int, error) {
	v, err := jsonv.Parse(data)
	if err != nil {
		return 0, reject("invalid export metadata: not valid JSON: %v", err)
	}
	o, _ := v.(*jsonv.Object)
	cv, _ := o.Get("command_versions")
	cvo, _ := cv.(*jsonv.Object)
	sr, ok := cvo.Get("store_report")
	if !ok {
		return 0, nil
	}
	n, _ := sr.(jsonv.Number)
	version, err := strconv.Atoi(string(n))
	if err != nil {
		return 0, reject("invalid export metadata: command_versions.store_report is %s, not an integer", jsonv.Compact(sr))
	}
	if version < 5 || version > 8 {
		return 0, reject("the archive's reports are store report version %d; versions 5 to 8 can be imported", version)
	}
	return version, nil
}
