package wire

import (
	"crypto/sha1"
	"encoding/hex"
	"strconv"

	"reportdb"
	"reportdb/jsonv"
)

// Hash computes PuppetDB's report hash: the SHA-1 of the compact JSON object
// of eight fields in key order (SPEC §6), timestamps rendered as
// yyyy-MM-ddTHH:mm:ss.SSSZ, transaction_uuid exactly as submitted.
func Hash(r *reportdb.Report, rawTransactionUUID *string) string {
	b := make([]byte, 0, 320)
	b = append(b, `{"certname":`...)
	b = jsonv.AppendString(b, r.Certname)
	b = append(b, `,"configuration_version":`...)
	b = jsonv.AppendString(b, r.ConfigurationVersion)
	b = append(b, `,"end_time":"`...)
	b = AppendMillis(b, r.EndTime)
	b = append(b, `","producer_timestamp":"`...)
	b = AppendMillis(b, r.ProducerTimestamp)
	b = append(b, `","puppet_version":`...)
	b = jsonv.AppendString(b, r.PuppetVersion)
	b = append(b, `,"report_format":`...)
	b = strconv.AppendInt(b, r.ReportFormat, 10)
	b = append(b, `,"start_time":"`...)
	b = AppendMillis(b, r.StartTime)
	b = append(b, `","transaction_uuid":`...)
	if rawTransactionUUID == nil {
		b = append(b, "null"...)
	} else {
		b = jsonv.AppendString(b, *rawTransactionUUID)
	}
	b = append(b, '}')
	sum := sha1.Sum(b)
	return hex.EncodeToString(sum[:])
}
