@testable import CalltraceKit
import XCTest

/// The Mann-Whitney U test against values SciPy 1.17 computed offline for the same samples:
/// `scipy.stats.mannwhitneyu(x, y, alternative="two-sided")`, method "exact" without ties,
/// "asymptotic" (with the continuity correction) with them.
final class MannWhitneyTests: XCTestCase {
    private let cases: [(x: [Double], y: [Double], u: Double, p: Double)] = [
        ([1, 2, 3, 4, 5], [6, 7, 8, 9, 10], 0, 0.0079365079),
        ([10.1, 10.3, 9.9, 10.2, 10.0], [10.15, 10.05, 9.95, 10.25, 10.12], 12, 1.0),
        ([3.1, 2.9, 3.3, 3.0], [3.6, 3.8, 3.5, 3.9, 3.7, 3.4], 0, 0.0095238095),
        ([1, 2, 2, 3, 4], [2, 3, 3, 5, 6], 6, 0.1988289440),
        ([5, 5, 5], [5, 5, 5], 4.5, 1.0),
        ([1, 2, 3], [4, 5, 6], 0, 0.1),
        ([12.0, 11.5, 13.1, 12.4, 11.9, 12.8, 12.2, 13.0], [11.1, 10.9, 11.6, 11.3, 10.8, 11.4, 11.0, 11.2], 63, 0.0003108003),
    ]

    func testAgreesWithSciPy() throws {
        for (x, y, u, p) in cases {
            let test = try XCTUnwrap(MannWhitneyU(x, y))
            XCTAssertEqual(test.u, u, "\(x) vs \(y)")
            XCTAssertEqual(test.pValue, p, accuracy: 1e-9, "\(x) vs \(y)")
        }
    }

    /// Swapping the samples gives the other U and the same p-value.
    func testIsSymmetric() throws {
        for (x, y, u, p) in cases {
            let test = try XCTUnwrap(MannWhitneyU(y, x))
            XCTAssertEqual(test.u, Double(x.count * y.count) - u, "\(x) vs \(y)")
            XCTAssertEqual(test.pValue, p, accuracy: 1e-9, "\(x) vs \(y)")
        }
    }

    /// With 3 runs a side no result can reach p < 0.05 (the smallest possible is 0.1); with 4, 0.029.
    func testSaysWhenTooFewRunsCanGiveAVerdict() throws {
        XCTAssertEqual(try XCTUnwrap(MannWhitneyU([1, 2, 3], [4, 5, 6])).smallestPossiblePValue, 0.1, accuracy: 1e-12)
        XCTAssertEqual(try XCTUnwrap(MannWhitneyU([1, 2, 3, 4], [5, 6, 7, 8])).smallestPossiblePValue, 2.0 / 70,
                       accuracy: 1e-12)
        XCTAssertNil(MannWhitneyU([], [1]))
    }

    /// The exact counts are the number of arrangements in all (C(n1 + n2, n1)), and symmetric.
    func testExactDistributionCountsEveryArrangement() {
        for (n1, n2) in [(1, 1), (2, 3), (5, 5), (4, 9), (20, 20)] {
            let counts = MannWhitneyU.counts(n1, n2)
            XCTAssertEqual(counts.count, n1 * n2 + 1)
            XCTAssertEqual(counts.reduce(0, +), MannWhitneyU.arrangements(n1, n2), accuracy: 1e-6 * MannWhitneyU.arrangements(n1, n2))
            XCTAssertEqual(counts, counts.reversed(), "\(n1), \(n2)")
        }
    }
}
