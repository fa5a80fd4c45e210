import Foundation

/// The Mann-Whitney U test of two independent samples (per-run totals of one function in two sets
/// of runs), two-sided, as Go's benchstat uses it to tell a change from noise: it assumes nothing
/// of the distributions, only that runs are independent.
///
/// Without ties the p-value is exact (the distribution of U counted over every arrangement of the
/// two samples); with ties it is the normal approximation with the tie correction and a continuity
/// correction. Both agree with SciPy's `mannwhitneyu(x, y, alternative="two-sided")` (exact
/// method, or asymptotic with `use_continuity=True`).
public struct MannWhitneyU: Sendable, Equatable {
    /// U of the first sample: the pairs (x, y) with x > y, ties counting a half.
    public let u: Double
    /// The two-sided p-value: how likely a difference at least this large is between two samples of
    /// one distribution.
    public let pValue: Double
    /// The smallest p-value samples of these sizes can give (all of one below all of the other):
    /// when it is not below the significance level, no verdict is possible, whatever the data.
    public let smallestPossiblePValue: Double

    /// Larger samples than this (product of the sizes) use the normal approximation even without
    /// ties: the exact count grows with n1 * n2 * n1 * n2.
    static let exactLimit = 2_500

    /// nil when either sample is empty.
    public init?(_ x: [Double], _ y: [Double]) {
        let n1 = x.count, n2 = y.count
        guard n1 > 0, n2 > 0 else { return nil }
        // Ranks 1...n of the pooled values, tied values sharing their mean rank.
        let pooled = (x.map { ($0, true) } + y.map { ($0, false) }).sorted { $0.0 < $1.0 }
        var rankSumX = 0.0, tieTerm = 0.0, ties = false
        var start = 0
        while start < pooled.count {
            var end = start + 1
            while end < pooled.count && pooled[end].0 == pooled[start].0 { end += 1 }
            let run = Double(end - start)
            let rank = Double(start + 1 + end) / 2  // mean of ranks start+1 ... end
            for index in start..<end where pooled[index].1 { rankSumX += rank }
            if run > 1 {
                ties = true
                tieTerm += run * run * run - run
            }
            start = end
        }
        let u1 = rankSumX - Double(n1 * (n1 + 1)) / 2
        let u2 = Double(n1 * n2) - u1
        u = u1
        let arrangements = Self.arrangements(n1, n2)
        smallestPossiblePValue = Self.smallestPValue(n1, n2)
        if !ties && n1 * n2 <= Self.exactLimit {
            // P(U <= min(U1, U2)), doubled: the distribution is symmetric.
            let counts = Self.counts(n1, n2)
            let limit = Int(min(u1, u2).rounded())
            let below = counts[0...limit].reduce(0, +)
            pValue = min(1, 2 * below / arrangements)
        } else {
            let n = Double(n1 + n2)
            let mean = Double(n1 * n2) / 2
            let variance = Double(n1 * n2) / 12 * ((n + 1) - tieTerm / (n * (n - 1)))
            guard variance > 0 else {  // every value the same: nothing tells the samples apart
                pValue = 1
                return
            }
            let z = (max(u1, u2) - mean - 0.5) / variance.squareRoot()
            pValue = min(1, max(0, erfc(z / 2.0.squareRoot())))  // 2 * P(Z > z)
        }
    }

    /// The smallest p-value samples of n1 and n2 values can give (every value of one below every
    /// value of the other, no ties): 2 / C(n1 + n2, n1).
    public static func smallestPValue(_ n1: Int, _ n2: Int) -> Double {
        n1 > 0 && n2 > 0 ? min(1, 2 / arrangements(n1, n2)) : 1
    }

    /// C(n1 + n2, n1), as a Double.
    static func arrangements(_ n1: Int, _ n2: Int) -> Double {
        var result = 1.0
        for k in 0..<min(n1, n2) { result = result * Double(n1 + n2 - k) / Double(k + 1) }
        return result
    }

    /// How many arrangements of n1 x's and n2 y's give each U = 0 ... n1 * n2, by the recurrence
    /// f(m, n, u) = f(m - 1, n, u - n) + f(m, n - 1, u) (the largest value is an x or a y).
    static func counts(_ n1: Int, _ n2: Int) -> [Double] {
        // table[m][n] is f(m, n, ·) for the current m; rows are built up one m at a time.
        var previous = (0...n2).map { _ in [1.0] }  // m = 0: U is 0 in the one arrangement
        for m in 1...max(n1, 1) where n1 > 0 {
            var current: [[Double]] = [[1.0]]  // n = 0
            for n in 1...max(n2, 1) where n2 > 0 {
                var row = [Double](repeating: 0, count: m * n + 1)
                for (u, count) in previous[n].enumerated() where u + n < row.count { row[u + n] += count }
                for (u, count) in current[n - 1].enumerated() { row[u] += count }
                current.append(row)
            }
            previous = current
        }
        return previous[n2]
    }
}
