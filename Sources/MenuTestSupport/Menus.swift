import Foundation
import MenuModel

/// The repository's shipped menu, `Config/menu.json`.
package func sichuanMenu() throws -> Menu {
    try Menu(contentsOfFile: configDirectory.appendingPathComponent("menu.json").path)
}
