// SPDX-License-Identifier: MIT
// Hostile inputs and output paths, run as a user would: each row sets up a folder, runs the stagecraft command
// line, and checks the exit code, the message and what is on disk afterwards. Plus the output rule of
// core/output/outputfile.h, which every output path of the CLI and the GUI goes through.
#include "output/outputfile.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

using namespace stagecraft;

namespace {

struct Run
{
    int exitCode = -1;
    QString out;
    QString err;
    bool finished = false;
};

Run runCli(QStringList args, bool asNobody = false)
{
    QProcess p;
    QString program = QStringLiteral(STAGECRAFT_CLI);
    if (asNobody) {
        // The folder-permission cases need a user that permissions apply to (CI runs as root).
        args.prepend(program);
        args = QStringList {
            QStringLiteral("--reuid=nobody"), QStringLiteral("--regid=nogroup"), QStringLiteral("--clear-groups")
        } + args;
        program = QStringLiteral("setpriv");
    }
    p.start(program, args);
    Run r;
    // A bad input must be answered quickly: a hang is a failure, not a timeout of the suite.
    r.finished = p.waitForFinished(60000);
    if (!r.finished) {
        p.kill();
        p.waitForFinished();
    }
    r.exitCode = p.exitCode();
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    return r;
}

bool isSymlink(const QString& p)
{
    struct stat st
    {
    };
    return ::lstat(p.toLocal8Bit().constData(), &st) == 0 && S_ISLNK(st.st_mode);
}

} // namespace

class TestSafety : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void outputRule();
    void commands_data();
    void commands();
};

void TestSafety::outputRule()
{
    QTemporaryDir dir;
    const std::string d = dir.path().toStdString();
    // Absent and regular: replaced through a temporary file.
    QCOMPARE(int(planOutput(d + "/new.json").kind), int(OutputKind::Replace));
    writeOutputFile(d + "/new.json", "abc");
    QCOMPARE(int(planOutput(d + "/new.json").kind), int(OutputKind::Replace));
    writeOutputFile(d + "/new.json", "abcd");
    std::ifstream in(d + "/new.json");
    std::string text((std::istreambuf_iterator<char>(in)), {});
    QCOMPARE(text, std::string("abcd"));
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden).size(), 1); // no temporary left
    // A symlink to a regular file: the target is replaced, the link stays.
    QCOMPARE(::symlink((d + "/new.json").c_str(), (d + "/link.json").c_str()), 0);
    const OutputPlan viaLink = planOutput(d + "/link.json");
    QCOMPARE(int(viaLink.kind), int(OutputKind::Replace));
    QCOMPARE(viaLink.target, d + "/new.json");
    writeOutputFile(d + "/link.json", "xyz");
    QVERIFY(isSymlink(dir.filePath(QStringLiteral("link.json"))));
    std::ifstream in2(d + "/new.json");
    QCOMPARE(std::string((std::istreambuf_iterator<char>(in2)), {}), std::string("xyz"));
    // Streams: written straight, never replaced.
    QCOMPARE(int(planOutput("/dev/null").kind), int(OutputKind::Stream));
    QCOMPARE(int(planOutput("-").kind), int(OutputKind::Stream));
    writeOutputFile("/dev/null", "ignored");
    struct stat st
    {
    };
    QVERIFY(::stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode));
    // Refused: a dangling symlink, a directory, a symlink to a directory, a FIFO nobody reads (no hang).
    QCOMPARE(::symlink((d + "/missing").c_str(), (d + "/dangling").c_str()), 0);
    QVERIFY_THROWS_EXCEPTION(OutputError, planOutput(d + "/dangling"));
    QVERIFY_THROWS_EXCEPTION(OutputError, planOutput(d));
    QCOMPARE(::symlink(d.c_str(), (d + "/dirlink").c_str()), 0);
    QVERIFY_THROWS_EXCEPTION(OutputError, planOutput(d + "/dirlink"));
    QCOMPARE(::mkfifo((d + "/fifo").c_str(), 0600), 0);
    QCOMPARE(int(planOutput(d + "/fifo").kind), int(OutputKind::Stream));
    QVERIFY_THROWS_EXCEPTION(OutputError, writeOutputFile(d + "/fifo", "x"));
}

void TestSafety::commands_data()
{
    // setup: actions run before the command, one per entry: "mkdir P", "touch P", "symlink TARGET LINK",
    // "mkfifo P", "zeros P MB", "run ARGS..." (a stagecraft command that must succeed), "chmod MODE P" and
    // "chown-nobody P". check: post-conditions: "exists P", "missing P", "symlink P", "chardev P",
    // "stdout-starts TEXT". {d} is the row's temporary folder.
    QTest::addColumn<QStringList>("setup");
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<bool>("asNobody");
    QTest::addColumn<int>("exitCode");
    QTest::addColumn<QString>("message");
    QTest::addColumn<QStringList>("check");
    auto L = [](std::initializer_list<const char*> v) {
        QStringList l;
        for (const char* s : v)
            l << QString::fromUtf8(s);
        return l;
    };
    // Issue case 1: output paths.
    QTest::newRow("chrome trace into /dev/null")
        << QStringList {} << L({ "report", "tiny", "--chrome-trace", "/dev/null" }) << false << 0 << QString()
        << L({ "chardev /dev/null" });
    QTest::newRow("chrome trace to standard output")
        << QStringList {} << L({ "report", "tiny", "--chrome-trace", "-" }) << false << 0 << QString()
        << L({ "stdout-starts {\"traceEvents\"" });
    QTest::newRow("chrome trace through a symlink to a file")
        << L({ "touch {d}/target.json", "symlink {d}/target.json {d}/link.json" })
        << L({ "report", "tiny", "--chrome-trace", "{d}/link.json" }) << false << 0 << QString()
        << L({ "symlink {d}/link.json", "nonempty {d}/target.json" });
    QTest::newRow("chrome trace through a dangling symlink")
        << L({ "symlink {d}/nothing {d}/link.json" }) << L({ "report", "tiny", "--chrome-trace", "{d}/link.json" })
        << false << 2 << QStringLiteral("a symlink to a file that does not exist") << L({ "symlink {d}/link.json" });
    QTest::newRow("chrome trace onto a folder") << QStringList {} << L({ "report", "tiny", "--chrome-trace", "{d}" })
                                                << false << 2 << QStringLiteral("it is a directory") << QStringList {};
    QTest::newRow("chrome trace into a FIFO nobody reads")
        << L({ "mkfifo {d}/fifo" }) << L({ "report", "tiny", "--chrome-trace", "{d}/fifo" }) << false << 2
        << QStringLiteral("FIFO with no reader") << QStringList {};
    // Issue case 2: trace files that are not traces.
    QTest::newRow("inspect 10 MB of zeros") << L({ "zeros {d}/z.et 10" }) << L({ "inspect", "{d}/z.et" }) << false << 2
                                            << QStringLiteral("not a Chakra ET file") << QStringList {};
    QTest::newRow("inspect /dev/zero") << QStringList {} << L({ "inspect", "/dev/zero" }) << false << 2
                                       << QStringLiteral("not a regular file") << QStringList {};
    QTest::newRow("inspect a FIFO") << L({ "mkfifo {d}/p.et" }) << L({ "inspect", "{d}/p.et" }) << false << 2
                                    << QStringLiteral("not a regular file") << QStringList {};
    // Issue case 5: --force replaces only files of its own export.
    QTest::newRow("force keeps another export's file")
        << L({ "run synth tiny --dp 2 --out {d}/n3 --name a.1 -q" })
        << L({ "synth", "tiny", "--out", "{d}/n3", "--name", "a", "--force", "-q" }) << false << 0 << QString()
        << L({ "exists {d}/n3/a.1.json", "exists {d}/n3/a.1.0.et", "exists {d}/n3/a.0.et" });
    // Issue case 6: a folder that cannot be listed.
    QTest::newRow("unlistable folder") << L({ "mkdir {d}/n5", "chown-nobody {d}/n5", "chmod 0333 {d}/n5" })
                                       << L({ "synth", "tiny", "--out", "{d}/n5", "-q" }) << true << 2
                                       << QStringLiteral("cannot list the output directory") << QStringList {};
    // Issue case 7: a file name with a rank beyond 64 bits.
    QTest::newRow("odd file name in the output folder")
        << L({ "mkdir {d}/o", "touch {d}/o/w.99999999999999999999.et" })
        << L({ "synth", "tiny", "--out", "{d}/o", "--name", "w", "-q" }) << false << 0 << QString()
        << L({ "exists {d}/o/w.0.et", "exists {d}/o/w.99999999999999999999.et" });
    // Issue case 8: --ranks takes exactly A:B with 0 <= A < B <= world (world 4 here).
    for (const char* bad : { "0x1:3", "1e2:3", "2:4garbage", "0:4:8", "0:-5", "1:-1", "2:1", "0:9", ":2" })
        QTest::newRow((std::string("--ranks ") + bad).c_str())
            << QStringList {}
            << L({ "synth", "tiny", "--dp", "4", "--global-batch", "8", "--out", "{d}/r", "-q", "--ranks", bad })
            << false << 2 << QStringLiteral("expected") << L({ "missing {d}/r/tiny.0.et" });
    QTest::newRow("--ranks 1:3") << QStringList {}
                                 << L({ "synth", "tiny", "--dp", "4", "--global-batch", "8", "--out", "{d}/r", "-q",
                                        "--ranks", "1:3" })
                                 << false << 0 << QString()
                                 << L({ "missing {d}/r/tiny.0.et", "exists {d}/r/tiny.1.et", "exists {d}/r/tiny.2.et",
                                        "missing {d}/r/tiny.3.et" });
    // Issue case 12, the export's part.
    QTest::newRow("--out creates parents") << QStringList {} << L({ "synth", "tiny", "--out", "{d}/a/b/c", "-q" })
                                           << false << 0 << QString() << L({ "exists {d}/a/b/c/tiny.0.et" });
    QTest::newRow("leftover temporary group file is cleaned")
        << L({ "mkdir {d}/t", "touch {d}/t/.w.json.tmp-1-1", "touch {d}/t/.w.0.et.tmp-1-2" })
        << L({ "synth", "tiny", "--out", "{d}/t", "--name", "w", "-q" }) << false << 0 << QString()
        << L({ "missing {d}/t/.w.json.tmp-1-1", "missing {d}/t/.w.0.et.tmp-1-2", "exists {d}/t/w.json" });
    QTest::newRow("symlink at a rank path is never replaced")
        << L({ "mkdir {d}/s", "symlink /dev/null {d}/s/w.0.et" })
        << L({ "synth", "tiny", "--out", "{d}/s", "--name", "w", "--force", "-q" }) << false << 2
        << QStringLiteral("is never replaced") << L({ "symlink {d}/s/w.0.et", "chardev /dev/null" });
    QTest::newRow("name too long for its temporary")
        << QStringList {} << (L({ "synth", "tiny", "--out", "{d}/l", "--name" }) << QString(240, QLatin1Char('x')))
        << false << 2 << QStringLiteral("fit in a file name") << QStringList {};
}

void TestSafety::commands()
{
    QFETCH(QStringList, setup);
    QFETCH(QStringList, args);
    QFETCH(bool, asNobody);
    QFETCH(int, exitCode);
    QFETCH(QString, message);
    QFETCH(QStringList, check);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    auto expand = [&](QString s) { return s.replace(QLatin1String("{d}"), dir.path()); };
    if (asNobody) {
        if (::geteuid() != 0)
            QSKIP("needs root to run the command as another user");
        if (QStandardPaths::findExecutable(QStringLiteral("setpriv")).isEmpty())
            QSKIP("setpriv (util-linux) is not installed");
        // nobody must reach the folder: the temporary dir is private to root.
        ::chmod(dir.path().toLocal8Bit().constData(), 0755);
    }
    for (const QString& action : setup) {
        QStringList w = expand(action).split(QLatin1Char(' '));
        const QString verb = w.takeFirst();
        const QByteArray a0 = w.value(0).toLocal8Bit();
        if (verb == QLatin1String("mkdir")) {
            QVERIFY(QDir().mkpath(w[0]));
        } else if (verb == QLatin1String("touch")) {
            QFile f(w[0]);
            QVERIFY(f.open(QIODevice::WriteOnly));
        } else if (verb == QLatin1String("symlink")) {
            QCOMPARE(::symlink(a0.constData(), w[1].toLocal8Bit().constData()), 0);
        } else if (verb == QLatin1String("mkfifo")) {
            QCOMPARE(::mkfifo(a0.constData(), 0600), 0);
        } else if (verb == QLatin1String("zeros")) {
            std::ofstream out(a0.constData(), std::ios::binary);
            const std::string mb(1 << 20, '\0');
            for (int i = 0; i < w[1].toInt(); ++i)
                out.write(mb.data(), static_cast<std::streamsize>(mb.size()));
        } else if (verb == QLatin1String("run")) {
            const Run r = runCli(w);
            QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        } else if (verb == QLatin1String("chmod")) {
            QCOMPARE(::chmod(w[1].toLocal8Bit().constData(), static_cast<mode_t>(w[0].toInt(nullptr, 8))), 0);
        } else if (verb == QLatin1String("chown-nobody")) {
            QProcess::execute(QStringLiteral("chown"), { QStringLiteral("nobody"), w[0] });
        } else {
            QFAIL(qPrintable(QStringLiteral("unknown setup action ") + verb));
        }
    }
    QStringList expanded;
    for (const QString& a : args)
        expanded << expand(a);
    const Run r = runCli(expanded, asNobody);
    QVERIFY2(r.finished, "the command did not finish within 60 s");
    QVERIFY2(r.exitCode == exitCode, qPrintable(QStringLiteral("exit %1, stderr: %2").arg(r.exitCode).arg(r.err)));
    if (!message.isEmpty())
        QVERIFY2(r.err.contains(message) || r.out.contains(message), qPrintable(r.err));
    QVERIFY2(!r.err.contains(QLatin1String("internal error")), qPrintable(r.err));
    for (const QString& c : check) {
        const QString e = expand(c);
        const int space = e.indexOf(QLatin1Char(' '));
        const QString verb = e.left(space), path = e.mid(space + 1);
        struct stat st
        {
        };
        if (verb == QLatin1String("exists"))
            QVERIFY2(QFileInfo::exists(path) || isSymlink(path), qPrintable(path));
        else if (verb == QLatin1String("missing"))
            QVERIFY2(!QFileInfo::exists(path) && !isSymlink(path), qPrintable(path));
        else if (verb == QLatin1String("symlink"))
            QVERIFY2(isSymlink(path), qPrintable(path));
        else if (verb == QLatin1String("chardev"))
            QVERIFY2(::stat(path.toLocal8Bit().constData(), &st) == 0 && S_ISCHR(st.st_mode), qPrintable(path));
        else if (verb == QLatin1String("nonempty"))
            QVERIFY2(QFileInfo(path).size() > 0, qPrintable(path));
        else if (verb == QLatin1String("stdout-starts"))
            QVERIFY2(r.out.startsWith(path), qPrintable(r.out.left(80)));
        else
            QFAIL(qPrintable(QStringLiteral("unknown check ") + verb));
    }
}

QTEST_GUILESS_MAIN(TestSafety)
#include "tst_safety.moc"
