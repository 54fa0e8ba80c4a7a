./demo_cooperative
