// SPDX-License-Identifier: MIT
#pragma once

#include <QWidget>
#include <array>
#include <string>
#include <vector>

class QLabel;
class QTableWidget;

namespace stagecraft {

struct SynthesisResult;

/// The bytes of one iteration by fabric level (cluster.topology; without one, a node and the network), summed over
/// every rank, with the communications that reach each level and how NCCL runs them. Plain value type, built in a
/// worker by summarizeFabricLevels().
struct FabricLevelSummary
{
    bool topology = false; ///< false: the stand-in of two levels (inside a node, across nodes)
    std::string preset; ///< cluster.topology's preset name, empty for a custom one
    std::array<double, 4> bytes {}; ///< comm size summed over ranks, by FabricLevel
    std::array<std::vector<std::string>, 4> uses {}; ///< "all_reduce dp (ring)" per level, first use first
};

/// Sums networkUsage() of every class times its rank count. Pure; runs in any thread.
FabricLevelSummary summarizeFabricLevels(const SynthesisResult& result);

/// The Communication tab's "bytes by fabric level" table: one row per level (NVLink, leaf, spine, core; or inside
/// and across nodes without a topology), its bytes, share, and what crosses it.
class FabricLevelPanel : public QWidget
{
    Q_OBJECT
public:
    explicit FabricLevelPanel(QWidget* parent = nullptr);
    ~FabricLevelPanel() override;

    void setSummary(const FabricLevelSummary& summary);
    void clear();
    QTableWidget* table() const;

private:
    QLabel* m_title;
    QTableWidget* m_table;
};

} // namespace stagecraft
