#!/usr/bin/env python3
"""Search quality on the Cranfield, CISI and Medline collections: their
parser, the scorer (nDCG@10 and recall@100), and the Quarry side of
scripts/quality/run.

Standard library only. Subcommands (COLLECTION is cranfield, cisi or
medline; cranfield when left out):

  prepare DIR [COLLECTION]    write DIR/docs.tsv and DIR/queries.tsv (what
                              the Lucene program reads)
  quarry URL RUN [COLLECTION] push the documents into a new ingestion_api
                              pair of the server at URL (with the admin
                              API key in QUARRY_API_KEY), ask
                              POST /search/send-search-message for 100
                              results of each query, and write a TREC run
                              file RUN
  score RUN [COLLECTION]      print nDCG@10, recall@100 and the number of
                              queries scored, as JSON, for the TREC run
                              file RUN
  describe [COLLECTION]       print the collection's name, documents and
                              queries, as JSON

docs/benchmarks.md ("Search quality") describes the method.
"""

import json
import math
import os
import sys
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
COLLECTION = os.path.join(HERE, "cranfield")

# The collections: their directory under scripts/quality, files, name, and
# how their judgements and query ids read (each directory's README says
# where the files come from).
COLLECTIONS = {
    "cranfield": {"dir": "cranfield", "docs": "cran.all.1400", "queries": "cran.qry",
                  "qrels": "cranqrel", "name": "Cranfield", "graded": True, "query_ids": "position"},
    "cisi": {"dir": "cisi", "docs": "CISI.ALL", "queries": "CISI.QRY",
             "qrels": "CISI.REL", "name": "CISI", "graded": False, "query_ids": "number"},
    "medline": {"dir": "medline", "docs": "MED.ALL", "queries": "MED.QRY",
                "qrels": "MED.REL", "name": "Medline", "graded": False, "query_ids": "number"},
}


def collection(name):
    """Returns the collection called name (a key of COLLECTIONS), with its
    directory's path as "path"."""
    if name not in COLLECTIONS:
        raise SystemExit(f"no collection {name!r}: want one of {', '.join(COLLECTIONS)}")
    c = dict(COLLECTIONS[name])
    c["path"] = os.path.join(HERE, c["dir"])
    return c
DEPTH = 100  # results asked of each system per query


# --- The collection ---------------------------------------------------------


def _records(path):
    """Yields (id, {field letter: text}) of a SMART-format file (.I id, then
    .T title, .A authors, .B source, .W text, and CISI's .X references,
    .K and .C). A field given twice (two documents of Cranfield have a
    second .W) is joined with a newline; an .A or .B after the .W
    (Cranfield's document 240 has one of each amid its text) is part of
    the text. Lines may end in CRLF (CISI's and Medline's do), a field's
mark in spaces (CISI's)."""
    rid, fields, cur = None, {}, None
    with open(path, encoding="ascii", newline="") as f:
        for raw in f:
            line = raw.rstrip("\r\n")
            if line.startswith(".I "):
                if rid is not None:
                    yield rid, fields
                rid, fields, cur = line[3:].strip(), {}, None
            elif len(line.rstrip()) == 2 and line[0] == "." and line[1] in "TAWBXKC":
                # CISI's markers may end in spaces (".T ", ".W  ").
                if cur == "W" and line[1] in "AB":
                    continue  # Document 240's damage: its text goes on.
                cur = line[1]
                if cur in fields:
                    fields[cur] += "\n"
                else:
                    fields[cur] = ""
            elif cur is not None:
                fields[cur] += line + "\n"
    if rid is not None:
        yield rid, fields


def documents(directory=COLLECTION, name="cran.all.1400"):
    """Returns the documents of file name in directory as (id, title,
    text): the id is the collection's number, the title its .T (Medline's
    documents have none), the text its .W (the abstract, which in most of
    Cranfield's documents starts with the title again). Whitespace is
    collapsed."""
    out = []
    for rid, f in _records(os.path.join(directory, name)):
        out.append((rid, " ".join(f.get("T", "").split()), " ".join(f.get("W", "").split())))
    return out


def queries(directory=COLLECTION, name="cran.qry", ids="position"):
    """Returns the queries of file name in directory as (id, text), the
    text their .W. With ids "position" (Cranfield: cran.qry numbers its
    225 queries 001, 002, 004, 008, … but cranqrel numbers them 1 to 225 in
    the same order) the id is the query's position, as every user of the
    collection maps them; with "number" (CISI, Medline) it is its .I
    number."""
    recs = list(_records(os.path.join(directory, name)))
    if ids == "position":
        return [(str(i), " ".join(f.get("W", "").split())) for i, (_, f) in enumerate(recs, start=1)]
    return [(str(int(rid)), " ".join(f.get("W", "").split())) for rid, f in recs]


def qrels(path=os.path.join(COLLECTION, "cranqrel"), graded=True):
    """Returns {query id: {document id: grade}} from a file of judgements.
    Graded (cranqrel, or a hand-made one in the tests): "query document
    grade" lines. Not graded: every line names a relevant document, given
    grade 1 (the best, so gain 4; with one grade nDCG is the same whatever
    its gain): CISI.REL's "query document 0 0.000000" and Medline's
    "query 0 document 1"."""
    out = {}
    with open(path, encoding="ascii") as f:
        for line in f:
            parts = line.split()
            if not parts:
                continue
            if graded:
                q, d, g = parts[0], parts[1], int(parts[2])
            elif len(parts) == 4 and parts[1] == "0" and parts[3] == "1":  # Medline
                q, d, g = str(int(parts[0])), str(int(parts[2])), 1
            else:  # CISI
                q, d, g = str(int(parts[0])), str(int(parts[1])), 1
            out.setdefault(q, {})[d] = g
    return out


def load(name):
    """Returns collection name's documents, queries and judgements."""
    c = collection(name)
    return (documents(c["path"], c["docs"]), queries(c["path"], c["queries"], c["query_ids"]),
            qrels(os.path.join(c["path"], c["qrels"]), c["graded"]))


def gain(grade):
    """Returns the gain of a Cranfield grade: 1 (a complete answer) gains 4,
    2 gains 3, 3 gains 2, 4 (minimum interest) gains 1; anything else (the
    collection's -1) gains 0 and is not relevant."""
    return 5 - grade if 1 <= grade <= 4 else 0


# --- Runs and the scorer ----------------------------------------------------


def read_run(path):
    """Returns {query id: [document id, …]} in the order of each query's
    rank column (the order the system answered), from a TREC run file
    ("query Q0 document rank score tag" lines). A document listed twice
    for a query keeps its first place."""
    rows = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, start=1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) != 6:
                raise ValueError(f"{path}:{n}: want 6 columns (query Q0 document rank score tag), got {len(parts)}")
            rows.setdefault(parts[0], []).append((int(parts[3]), parts[2]))
    out = {}
    for q, ranked in rows.items():
        seen, docs = set(), []
        for _, d in sorted(ranked, key=lambda r: r[0]):
            if d not in seen:
                seen.add(d)
                docs.append(d)
        out[q] = docs
    return out


def write_run(path, results, tag):
    """Writes results ({query id: [(document id, score), …]} in rank order)
    as a TREC run file."""
    with open(path, "w", encoding="utf-8") as f:
        for q, docs in results.items():
            for rank, (d, score) in enumerate(docs, start=1):
                f.write(f"{q} Q0 {d} {rank} {score} {tag}\n")


def ndcg(judged, ranked, k=10):
    """Returns nDCG@k of one query: DCG = sum over the first k results of
    gain / log2(rank + 1) (linear gains, as trec_eval's ndcg_cut), divided
    by the DCG of the judged documents in the best order."""
    dcg = sum(gain(judged.get(d, 0)) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted((gain(g) for g in judged.values()), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def recall(judged, ranked, k=100):
    """Returns recall@k of one query: the share of its relevant documents
    (gain > 0) among the first k results."""
    relevant = {d for d, g in judged.items() if gain(g) > 0}
    if not relevant:
        return 0.0
    return len(relevant.intersection(ranked[:k])) / len(relevant)


def evaluate(judgements, run):
    """Returns the mean nDCG@10 and recall@100 over the queries with at
    least one relevant document (a query the run does not answer scores 0,
    one it answers but nobody judged is left out), and their number."""
    scored = [q for q, judged in judgements.items() if any(gain(g) > 0 for g in judged.values())]
    if not scored:
        return {"ndcg@10": 0.0, "recall@100": 0.0, "queries": 0}
    n = sum(ndcg(judgements[q], run.get(q, []), 10) for q in scored)
    r = sum(recall(judgements[q], run.get(q, []), 100) for q in scored)
    return {"ndcg@10": n / len(scored), "recall@100": r / len(scored), "queries": len(scored)}


# --- Preparing Lucene's input -----------------------------------------------


def prepare(directory, name="cranfield"):
    """Writes docs.tsv (id, title and text joined by a newline, as one
    field) and queries.tsv (id, text) of collection name for
    LuceneBM25.java. Tabs cannot occur: whitespace is collapsed."""
    docs, qs, _ = load(name)
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "docs.tsv"), "w", encoding="utf-8") as f:
        for d, title, text in docs:
            f.write(f"{d}\t{title}\t{text}\n")
    with open(os.path.join(directory, "queries.tsv"), "w", encoding="utf-8") as f:
        for q, text in qs:
            f.write(f"{q}\t{text}\n")


# --- Quarry -----------------------------------------------------------------


class Client:
    """Client calls Quarry's API with an admin API key."""

    def __init__(self, base, key):
        self.base = base.rstrip("/")
        self.key = key

    def call(self, method, path, body=None, missing=None):
        """Returns the JSON answer; exits on an error status, with code 3
        and the message missing on a 404 or 405 when missing is given."""
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method)
        req.add_header("Authorization", "Bearer " + self.key)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=120) as r:
                return json.loads(r.read() or b"null")
        except urllib.error.HTTPError as e:
            if missing and e.code in (404, 405):
                print(missing, file=sys.stderr)
                raise SystemExit(3)
            raise SystemExit(f"{method} {path}: {e.code} {e.read()[:500].decode(errors='replace')}")


def search(client, text, hits=DEPTH):
    """Returns [(document id, score), …] of one query through Onyx v4.6.1's
    SendSearchQueryRequest (no filters, no query expansion, no LLM
    selection, no content, not streamed), in the answer's order, each
    document once (its first, best-ranked section)."""
    body = {"search_query": text, "filters": None, "num_docs_fed_to_llm_selection": None,
            "run_query_expansion": False, "num_hits": hits, "hybrid_alpha": None,
            "include_content": False, "stream": False}
    answer = client.call("POST", "/search/send-search-message", body,
                         missing="quarry: this server has no POST /search/send-search-message")
    if answer.get("error"):
        raise SystemExit(f"search {text!r}: {answer['error']}")
    out, seen = [], set()
    for i, doc in enumerate(answer["search_docs"]):
        d = doc["document_id"]
        if d in seen:
            continue
        seen.add(d)
        score = doc.get("score")
        out.append((d, score if score is not None else -i))
    return out[:hits]


def run_quarry(base, key, run_path, coll="cranfield"):
    """Pushes collection coll into a new public ingestion_api pair and
    writes the run of its queries to run_path."""
    client = Client(base, key)
    if client.call("GET", "/manage/admin/connector"):
        raise SystemExit("quarry: the database already has connectors; measure on an empty one "
                         "(other documents would change the ranking)")
    name = coll
    label = collection(coll)["name"]
    docs, qs, _ = load(coll)
    conn = client.call("POST", "/manage/admin/connector", {
        "name": name, "source": "ingestion_api", "input_type": "load_state",
        "connector_specific_config": {}, "access_type": "public"})
    cred = client.call("POST", "/manage/credential", {
        "name": name, "source": "ingestion_api", "credential_json": {}, "admin_public": True})
    pair = client.call("PUT", f"/manage/connector/{conn['id']}/credential/{cred['id']}",
                       {"name": name, "access_type": "public", "groups": []})
    pair_id = pair["data"]
    started = time.monotonic()
    for d, title, text in docs:
        got = client.call("POST", "/onyx-api/ingestion", {"cc_pair_id": pair_id, "document": {
            "id": d, "sections": [{"text": text, "link": None}], "source": "ingestion_api",
            "semantic_identifier": title or f"{label} {d}", "title": title or None, "metadata": {}}})
        if got["document_id"] != d:
            raise SystemExit(f"document {d} was stored as {got['document_id']!r}")
    took = time.monotonic() - started
    print(f"quarry: pushed {len(docs)} documents in {took:.1f} s", file=sys.stderr)
    # The index follows the store; wait until the last document is found.
    last_id, last_title, _ = docs[-1]
    last_title = last_title or f"{label} {last_id}"
    deadline = time.monotonic() + 300
    while last_id not in {d for d, _ in search(client, last_title, 10)}:
        if time.monotonic() > deadline:
            raise SystemExit(f"document {last_id} is not found by its title 5 minutes after it was pushed")
        time.sleep(1)
    results, started = {}, time.monotonic()
    for q, text in qs:
        results[q] = search(client, text)
    took = time.monotonic() - started
    mean = sum(len(r) for r in results.values()) / len(results)
    print(f"quarry: {len(results)} queries in {took:.1f} s, {mean:.1f} documents each on average",
          file=sys.stderr)
    write_run(run_path, results, "quarry")


def main(argv):
    coll = lambda n: argv[n] if len(argv) > n else "cranfield"
    if len(argv) in (2, 3) and argv[0] == "prepare":
        prepare(argv[1], coll(2))
    elif len(argv) in (3, 4) and argv[0] == "quarry":
        run_quarry(argv[1], os.environ["QUARRY_API_KEY"], argv[2], coll(3))
    elif len(argv) in (2, 3) and argv[0] == "score":
        print(json.dumps(evaluate(load(coll(2))[2], read_run(argv[1]))))
    elif len(argv) in (1, 2) and argv[0] == "describe":
        docs, qs, _ = load(coll(1))
        print(json.dumps({"name": collection(coll(1))["name"], "documents": len(docs), "queries": len(qs)}))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
