// Every simkit command for BlobSDK, on SimKit's executors: the first statement of the program.
import SimKitAsync
import BlobSDKSimKit

SimKitAsyncHost.main(sdks: BlobCores.all)   // --sdk custom:blob
