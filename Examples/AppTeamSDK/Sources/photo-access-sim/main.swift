import SimKitCommand
import PhotoAccessSimKit

SimKitCommand.main(sdks: PhotoAccessCores.all)   // every simkit command; --sdk custom:app-team
