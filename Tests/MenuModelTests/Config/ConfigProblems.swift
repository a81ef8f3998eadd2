import Foundation

@testable import MenuModel

/// The problems loading `json` reports; empty when it loads.
func configProblems(_ json: String) -> [ConfigProblem] {
    do {
        _ = try Menu(jsonData: Data(json.utf8))
        return []
    } catch {
        return error.problems
    }
}
