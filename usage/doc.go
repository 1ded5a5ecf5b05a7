// Package usage owns pifs's token and cost reports: the usage each entry of
// a session carries (Record, kept incrementally by a Collector), and the
// reports of a scope, the whole store or one project, by day, month, session
// and model, rendered as CSV, JSON and a bar chart of daily cost (daily.svg);
// and its tool use: the tool calls and results of each session (ToolRecord,
// kept by a ToolCollector), reported by day, project, tool and model
// (tools.csv, tools.json; see toolreport.go). A session file's records of
// both kinds and its name are its Facts, read in one pass and kept per
// version of the file.
//
// Counting follows pi's /session totals: assistant and tool-result messages
// with a usage object, usage entries, and compactions and branch summaries
// with a truthy usage; tokens and costs that are not numbers count 0.
// Compactions and branch summaries name no model in pi 1.6: their provider
// and model are "unknown" unless the entry has string fields "provider" and
// "model". An assistant message's model is its responseModel when present,
// as in pi's own cost breakdown.
//
// Forks and clones (the rule, in two sentences): a model call is its
// entry's id and timestamp, which pi's fork and clone copy, with its
// provider, model, tokens and cost, and the store's, a project's, a day's,
// a month's and a model's totals count each call once, in the first session
// that holds it, sessions ordered by header timestamp, then path. Each
// sessions row shows pi's /session totals over all the file's entries
// (input, output, ...) and the session's own share, the calls it holds first
// (ownInput, ownOutput, ...).
//
// So own shares add up to the store's totals, and as calls are attributed
// once for the whole store, the root's totals are the sums of the
// projects'. A line repeated within one file is one call too: such a
// session's own share is below its pi totals although it copies nothing.
//
// Days and months are in the report's time zone (the mount's local zone
// unless --tz says otherwise). Every CSV starts with a header row; daily.csv
// and monthly.csv carry the zone in a timeZone column on each row (a comment
// line would trip CSV readers), and every JSON file is an object
// {"timeZone", "totals", "rows"} whose rows have the CSV's columns as keys
// (models as an array; day and month rows also have byModel, each model's
// tokens and cost). Numbers are written as JavaScript writes them; models
// in CSV are separated by spaces. Records without a valid time are in a last
// day and month row named "unknown".
package usage
