// LuceneSearch is the speed peer of `quarry bench -op search -peer URL`
// (scripts/speed/run): Lucene as it comes, on Debian's liblucene8-java,
// behind a minimal HTTP front (the JDK's com.sun.net.httpserver, a fixed
// pool of threads), over an index on disk that outlives the process, so
// that a corpus loaded once is searched again by later runs.
//
// The index is the quality peer's (scripts/quality/LuceneBM25.java):
// EnglishAnalyzer, BM25 (k1 = 1.2, b = 0.75), the title and the text of a
// document in one field, "text", queried through the classic QueryParser
// with the query escaped, so that every word is an optional clause (OR).
// Here the field is also stored, with its offsets in the postings, so
// that the UnifiedHighlighter gives each hit shown a snippet as Quarry's
// match_highlights does; beside it, each document's pair (a keyword: the
// rights filter), and its id and title as doc values, which a hit reads
// without decompressing a block of stored fields (read as stored fields,
// they took longer than the search itself: 5 ms for 30 hits at 200,000
// documents, against 1.4 ms).
//
// One IndexWriter with Lucene's defaults (TieredMergePolicy, a 16 MB
// buffer, no force-merge): the index is what Lucene makes of a load
// without tuning, its segments merged as Lucene merges them, as Quarry's
// are by its own tiers. Nothing is visible until /commit: the searches
// and /stats read the last commit (a SearcherManager over the directory),
// and a load interrupted before its commit is dropped (no commit on close).
//
// Endpoints, JSON in and out (errors: 4xx/5xx with {"error": …}):
//
//	GET  /stats   → {"documents": N, "corpus": "…", "lucene": "8.8.1"}
//	              what the last commit holds; corpus is the tag /commit gave
//	              it, "" when the index is of another layout (LAYOUT)
//	POST /clear   deletes every document (visible at the next /commit) → {}
//	POST /load    {"documents": [{"id", "title", "text", "pair"}, …]} → {"added": N}
//	POST /commit  {"corpus": "…"} commits, tagged, and shows it → /stats's answer
//	POST /search  {"query": "…", "pairs": ["…", …], "num_hits": 30}
//	              → {"total_hits": N, "search_docs": [{"document_id", "title",
//	                 "score", "match_highlights": ["… <hi>word</hi> …"]}, …]}
//	              every word optional (OR), ranked by BM25, among the documents
//	              of the pairs given only (a TermInSetQuery as a FILTER clause:
//	              it restricts, it does not score), the best num_hits with a
//	              snippet each (search_docs as Onyx names them, so that bench
//	              counts the answers with results as it counts Quarry's)
//
// Run with the JDK's source launcher (a JRE's java suffices); port 0 takes
// a free one; the first line on standard output is the address:
//
//	java -cp lucene-core.jar:lucene-analyzers-common.jar:lucene-queryparser.jar:lucene-highlighter.jar:lucene-queries.jar:lucene-memory.jar \
//	    LuceneSearch.java INDEX-DIR [PORT [THREADS]]
//	listening on http://127.0.0.1:41234
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.en.EnglishAnalyzer;
import org.apache.lucene.document.BinaryDocValuesField;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.FieldType;
import org.apache.lucene.document.StringField;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.BinaryDocValues;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.DocValues;
import org.apache.lucene.index.IndexOptions;
import org.apache.lucene.index.IndexReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.ReaderUtil;
import org.apache.lucene.queryparser.classic.ParseException;
import org.apache.lucene.queryparser.classic.QueryParser;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.SearcherFactory;
import org.apache.lucene.search.SearcherManager;
import org.apache.lucene.search.TermInSetQuery;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.search.similarities.BM25Similarity;
import org.apache.lucene.search.uhighlight.DefaultPassageFormatter;
import org.apache.lucene.search.uhighlight.PassageFormatter;
import org.apache.lucene.search.uhighlight.UnifiedHighlighter;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FSDirectory;
import org.apache.lucene.util.BytesRef;
import org.apache.lucene.util.Version;

public class LuceneSearch {
    static final String TEXT = "text", ID = "id", TITLE = "title", PAIR = "pair", CORPUS = "corpus";
    /** The index's layout; a commit of another holds no corpus for /stats. */
    static final String SCHEMA = "schema", LAYOUT = "2";

    final Analyzer analyzer = new EnglishAnalyzer();
    final BM25Similarity bm25 = new BM25Similarity(); // k1 = 1.2, b = 0.75
    final FieldType textType = new FieldType(TextField.TYPE_STORED);
    final IndexWriter writer;
    final SearcherManager searchers;

    LuceneSearch(Directory dir) throws IOException {
        textType.setIndexOptions(IndexOptions.DOCS_AND_FREQS_AND_POSITIONS_AND_OFFSETS);
        textType.freeze();
        IndexWriterConfig cfg = new IndexWriterConfig(analyzer).setSimilarity(bm25).setCommitOnClose(false);
        writer = new IndexWriter(dir, cfg);
        if (!DirectoryReader.indexExists(dir)) {
            writer.commit(); // An empty index to search.
        }
        searchers = new SearcherManager(dir, new SearcherFactory() {
            @Override
            public IndexSearcher newSearcher(IndexReader r, IndexReader previous) {
                IndexSearcher s = new IndexSearcher(r);
                s.setSimilarity(bm25);
                return s;
            }
        });
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 1 || args.length > 3) {
            System.err.println("usage: LuceneSearch INDEX-DIR [PORT [THREADS]]");
            System.exit(2);
        }
        int port = args.length > 1 ? Integer.parseInt(args[1]) : 0;
        int threads = args.length > 2 ? Integer.parseInt(args[2]) : Math.max(4, Runtime.getRuntime().availableProcessors());
        // The JDK's server writes the headers and the body apart: without
        // TCP_NODELAY, Nagle's algorithm holds the body for the client's
        // delayed ACK (tens of milliseconds an answer).
        System.setProperty("sun.net.httpserver.nodelay", "true");
        LuceneSearch peer = new LuceneSearch(FSDirectory.open(Paths.get(args[0])));
        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 64);
        server.setExecutor(Executors.newFixedThreadPool(threads));
        server.createContext("/", peer::handle);
        server.start();
        System.out.println("listening on http://127.0.0.1:" + server.getAddress().getPort());
        System.out.flush();
    }

    /** Routes a request, and answers it with its JSON or an error. */
    void handle(HttpExchange ex) throws IOException {
        int status = 200;
        String answer;
        try {
            String body = new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
            String route = ex.getRequestMethod() + " " + ex.getRequestURI().getPath();
            Map<String, Object> in = body.isBlank() ? Map.of() : Json.object(body);
            switch (route) {
                case "GET /stats": answer = stats(); break;
                case "POST /clear": writer.deleteAll(); answer = "{}"; break;
                case "POST /load": answer = load(in); break;
                case "POST /commit": answer = commit(in); break;
                case "POST /search": answer = search(in); break;
                default: status = 404; answer = "{\"error\":" + Json.quote("no route " + route) + "}";
            }
        } catch (IllegalArgumentException | IndexOutOfBoundsException | ClassCastException | NullPointerException e) {
            status = 400;
            answer = "{\"error\":" + Json.quote(String.valueOf(e)) + "}";
        } catch (Throwable e) { // An Error too: the exchange must be answered.
            status = 500;
            answer = "{\"error\":" + Json.quote(String.valueOf(e)) + "}";
        }
        byte[] b = answer.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", "application/json");
        ex.sendResponseHeaders(status, b.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(b);
        }
    }

    String stats() throws IOException {
        IndexSearcher s = searchers.acquire();
        try {
            DirectoryReader r = (DirectoryReader) s.getIndexReader();
            Map<String, String> data = r.getIndexCommit().getUserData();
            String corpus = LAYOUT.equals(data.get(SCHEMA)) ? data.getOrDefault(CORPUS, "") : "";
            return "{\"documents\":" + r.numDocs() + ",\"corpus\":" + Json.quote(corpus) + ",\"lucene\":" + Json.quote(Version.LATEST.toString()) + "}";
        } finally {
            searchers.release(s);
        }
    }

    @SuppressWarnings("unchecked")
    String load(Map<String, Object> in) throws IOException {
        List<Object> docs = (List<Object>) in.get("documents");
        List<Document> batch = new ArrayList<>(docs.size());
        for (Object o : docs) {
            Map<String, Object> f = (Map<String, Object>) o;
            String title = (String) f.get("title");
            Document d = new Document();
            d.add(new BinaryDocValuesField(ID, new BytesRef((String) f.get("id"))));
            d.add(new StringField(PAIR, (String) f.get("pair"), Field.Store.NO));
            d.add(new BinaryDocValuesField(TITLE, new BytesRef(title)));
            d.add(new Field(TEXT, title + "\n" + f.get("text"), textType));
            batch.add(d);
        }
        writer.addDocuments(batch);
        return "{\"added\":" + batch.size() + "}";
    }

    String commit(Map<String, Object> in) throws IOException {
        writer.setLiveCommitData(Map.of(CORPUS, (String) in.getOrDefault(CORPUS, ""), SCHEMA, LAYOUT).entrySet());
        writer.commit();
        searchers.maybeRefreshBlocking();
        return stats();
    }

    @SuppressWarnings("unchecked")
    String search(Map<String, Object> in) throws IOException {
        String text = (String) in.get("query");
        int numHits = ((Number) in.get("num_hits")).intValue();
        List<BytesRef> pairs = new ArrayList<>();
        for (Object p : (List<Object>) in.get("pairs")) {
            pairs.add(new BytesRef((String) p));
        }
        Query words;
        try {
            words = new QueryParser(TEXT, analyzer).parse(QueryParser.escape(text)); // Default operator OR.
        } catch (ParseException e) { // No word at all.
            return "{\"total_hits\":0,\"search_docs\":[]}";
        }
        Query q = new BooleanQuery.Builder()
                .add(words, BooleanClause.Occur.MUST)
                .add(new TermInSetQuery(PAIR, pairs), BooleanClause.Occur.FILTER)
                .build();
        IndexSearcher s = searchers.acquire();
        try {
            TopDocs top = s.search(q, numHits);
            String[] snippets = new Highlighter(s, analyzer).highlight(TEXT, q, top, 1);
            StringBuilder out = new StringBuilder("{\"total_hits\":").append(top.totalHits.value).append(",\"search_docs\":[");
            List<LeafReaderContext> leaves = s.getIndexReader().leaves();
            for (int i = 0; i < top.scoreDocs.length; i++) {
                ScoreDoc sd = top.scoreDocs[i];
                LeafReaderContext leaf = leaves.get(ReaderUtil.subIndex(sd.doc, leaves));
                out.append(i == 0 ? "" : ",")
                        .append("{\"document_id\":").append(Json.quote(value(leaf, ID, sd.doc)))
                        .append(",\"title\":").append(Json.quote(value(leaf, TITLE, sd.doc)))
                        .append(",\"score\":").append(sd.score)
                        .append(",\"match_highlights\":[").append(snippets[i] == null ? "" : Json.quote(snippets[i])).append("]}");
            }
            return out.append("]}").toString();
        } finally {
            searchers.release(s);
        }
    }

    /** Returns the doc value of field of document doc (of the whole index), in its leaf. */
    static String value(LeafReaderContext leaf, String field, int doc) throws IOException {
        BinaryDocValues v = DocValues.getBinary(leaf.reader(), field);
        return v.advanceExact(doc - leaf.docBase) ? v.binaryValue().utf8ToString() : "";
    }

    /** The UnifiedHighlighter, its matches between <hi> and </hi> as Quarry's. */
    static final class Highlighter extends UnifiedHighlighter {
        static final PassageFormatter FORMAT = new DefaultPassageFormatter("<hi>", "</hi>", "… ", false);

        Highlighter(IndexSearcher s, Analyzer a) {
            super(s, a);
        }

        @Override
        protected PassageFormatter getFormatter(String field) {
            return FORMAT;
        }
    }

    /** Just enough JSON: objects, arrays, strings, numbers, true, false, null. */
    static final class Json {
        final String s;
        int i;

        Json(String s) {
            this.s = s;
        }

        @SuppressWarnings("unchecked")
        static Map<String, Object> object(String s) {
            Json j = new Json(s);
            Object v = j.value();
            j.space();
            if (j.i != s.length() || !(v instanceof Map)) {
                throw new IllegalArgumentException("not one JSON object");
            }
            return (Map<String, Object>) v;
        }

        Object value() {
            space();
            if (i >= s.length()) {
                throw new IllegalArgumentException("JSON ends early");
            }
            char c = s.charAt(i);
            switch (c) {
                case '{': {
                    Map<String, Object> m = new LinkedHashMap<>();
                    i++;
                    for (space(); peek() != '}';) {
                        String k = string();
                        space();
                        expect(':');
                        m.put(k, value());
                        space();
                        if (peek() == ',') {
                            i++;
                            space();
                        }
                    }
                    i++;
                    return m;
                }
                case '[': {
                    List<Object> l = new ArrayList<>();
                    i++;
                    for (space(); peek() != ']';) {
                        l.add(value());
                        space();
                        if (peek() == ',') {
                            i++;
                        }
                        space();
                    }
                    i++;
                    return l;
                }
                case '"':
                    return string();
                default:
                    for (String lit : new String[] {"true", "false", "null"}) {
                        if (s.startsWith(lit, i)) {
                            i += lit.length();
                            return lit.equals("null") ? null : Boolean.valueOf(lit);
                        }
                    }
                    int start = i;
                    while (i < s.length() && "+-.eE0123456789".indexOf(s.charAt(i)) >= 0) {
                        i++;
                    }
                    return Double.valueOf(s.substring(start, i));
            }
        }

        String string() {
            expect('"');
            StringBuilder b = new StringBuilder();
            for (char c; (c = s.charAt(i++)) != '"';) {
                if (c != '\\') {
                    b.append(c);
                    continue;
                }
                char e = s.charAt(i++);
                switch (e) {
                    case 'b': b.append('\b'); break;
                    case 'f': b.append('\f'); break;
                    case 'n': b.append('\n'); break;
                    case 'r': b.append('\r'); break;
                    case 't': b.append('\t'); break;
                    case 'u': b.append((char) Integer.parseInt(s.substring(i, i + 4), 16)); i += 4; break;
                    default: b.append(e); // " \ /
                }
            }
            return b.toString();
        }

        char peek() {
            if (i >= s.length()) {
                throw new IllegalArgumentException("JSON ends early");
            }
            return s.charAt(i);
        }

        void expect(char c) {
            if (peek() != c) {
                throw new IllegalArgumentException("JSON: expected " + c + " at " + i);
            }
            i++;
        }

        void space() {
            while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
                i++;
            }
        }

        static String quote(String v) {
            StringBuilder b = new StringBuilder("\"");
            for (int k = 0; k < v.length(); k++) {
                char c = v.charAt(k);
                if (c == '"' || c == '\\') {
                    b.append('\\').append(c);
                } else if (c < 0x20) {
                    b.append(String.format("\\u%04x", (int) c));
                } else {
                    b.append(c);
                }
            }
            return b.append('"').toString();
        }
    }
}
