// LuceneBM25 is the baseline of scripts/quality/run: Lucene's BM25 as it
// comes, on Debian's liblucene8-java. It indexes docs.tsv (id, title, text)
// with EnglishAnalyzer into one field holding the title and the text (in
// memory), runs each line of queries.tsv (id, text) through the classic
// QueryParser on that field (the text escaped with QueryParser.escape, so
// every word is an optional clause: OR), and writes the top results of each
// query as a TREC run file.
//
// Run with the JDK's source launcher (a JRE's java suffices):
//
//	java -cp lucene-core.jar:lucene-analyzers-common.jar:lucene-queryparser.jar \
//	    LuceneBM25.java docs.tsv queries.tsv run.txt 100
import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.en.EnglishAnalyzer;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.StringField;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.queryparser.classic.QueryParser;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.search.similarities.BM25Similarity;
import org.apache.lucene.store.ByteBuffersDirectory;
import org.apache.lucene.store.Directory;
import org.apache.lucene.util.Version;

public class LuceneBM25 {
    public static void main(String[] args) throws Exception {
        if (args.length != 4) {
            System.err.println("usage: LuceneBM25 docs.tsv queries.tsv run.txt depth");
            System.exit(2);
        }
        int depth = Integer.parseInt(args[3]);
        Analyzer analyzer = new EnglishAnalyzer();
        BM25Similarity bm25 = new BM25Similarity(); // k1 = 1.2, b = 0.75
        Directory dir = new ByteBuffersDirectory();
        IndexWriterConfig cfg = new IndexWriterConfig(analyzer);
        cfg.setSimilarity(bm25);
        int docs = 0;
        try (IndexWriter w = new IndexWriter(dir, cfg);
                BufferedReader r = Files.newBufferedReader(Paths.get(args[0]), StandardCharsets.UTF_8)) {
            for (String line; (line = r.readLine()) != null;) {
                String[] f = line.split("\t", -1);
                Document d = new Document();
                d.add(new StringField("id", f[0], Field.Store.YES));
                d.add(new TextField("text", f[1] + "\n" + f[2], Field.Store.NO));
                w.addDocument(d);
                docs++;
            }
        }
        IndexSearcher searcher = new IndexSearcher(DirectoryReader.open(dir));
        searcher.setSimilarity(bm25);
        QueryParser parser = new QueryParser("text", analyzer); // default operator OR
        int queries = 0;
        try (BufferedReader r = Files.newBufferedReader(Paths.get(args[1]), StandardCharsets.UTF_8);
                BufferedWriter out = Files.newBufferedWriter(Paths.get(args[2]), StandardCharsets.UTF_8)) {
            for (String line; (line = r.readLine()) != null;) {
                String[] f = line.split("\t", 2);
                Query q = parser.parse(QueryParser.escape(f[1]));
                TopDocs top = searcher.search(q, depth);
                int rank = 1;
                for (ScoreDoc sd : top.scoreDocs) {
                    String id = searcher.doc(sd.doc).get("id");
                    out.write(f[0] + " Q0 " + id + " " + rank++ + " " + sd.score + " lucene-bm25\n");
                }
                queries++;
            }
        }
        System.err.println("lucene " + Version.LATEST + ": " + docs + " documents, " + queries + " queries");
    }
}
